import type { Child } from "hono/jsx";
import { DASHBOARD_ASSETS_VERSION } from "../../../generated/dashboard-assets.ts";

export const scriptPath = `/dashboard/assets/app-${DASHBOARD_ASSETS_VERSION}.js`;
export const stylePath = `/dashboard/assets/app-${DASHBOARD_ASSETS_VERSION}.css`;

/** The page frame: one stylesheet, one deferred script, both from this origin (the CSP allows nothing else). */
export function Layout(props: { title: string; email?: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.title}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={stylePath} />
        <script src={scriptPath} defer />
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <span class="brand">Affiliate tracking</span>
          {props.email ? (
            <form id="sign-out" class="sign-out" method="post" action="/api/v1/auth/sign-out">
              <span class="who">{props.email}</span>
              <button type="submit">Sign out</button>
            </form>
          ) : null}
        </header>
        <main id="main">{props.children}</main>
      </body>
    </html>
  );
}
