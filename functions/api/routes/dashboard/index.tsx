import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { parseProgramId } from "../../../../lib/auth/require-program-membership.ts";
import {
  loadProgramPage,
  type PageDimension,
  pageDimensions,
} from "../../../../lib/dashboard/page/load-program-page.ts";
import { readProgramWebhooks } from "../../../../lib/dashboard/page/program-webhooks.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { ACCOUNT_BLOCKED_MESSAGE } from "../../../../lib/identity/identity-errors.ts";
import { readSessionSummary } from "../../../../lib/identity/session-summary.ts";
import { listMyPrograms } from "../../../../lib/programs/list-my-programs.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { pageSession } from "./page-session.ts";
import { registerDashboardStaticAssets } from "./static-assets.ts";
import { NoticePage } from "./views/notice-page.tsx";
import { DashboardPage } from "./views/program-page.tsx";

export const DASHBOARD_PATH = "/dashboard";
export const SIGNED_OUT_PATH = "/dashboard/signed-out";
export const SIGN_IN_PATH = "/api/v1/auth/sign-in";
export const PROGRAM_REFUSED_TITLE = "No access to this program";

/**
 * Scripts and styles from this origin only (no inline script, no CDN); the page calls only this origin;
 * no framing (clickjacking), no plugins, no base-URL or form-target tricks.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function pageHeaders(c: Context<AppEnv>): void {
  c.header("Content-Security-Policy", DASHBOARD_CSP);
  c.header("X-Content-Type-Options", "nosniff");
  c.header("X-Frame-Options", "DENY");
  c.header("Referrer-Policy", "no-referrer");
  c.header("Cache-Control", "no-store");
}

function groupByOf(value: string | undefined): PageDimension {
  return (pageDimensions as readonly string[]).includes(value ?? "") ? (value as PageDimension) : "partner";
}

/**
 * The dashboard page (server-rendered with Hono JSX) and its two static assets (`npm run build:dashboard`,
 * Workers static assets: ./static-assets.ts). The page reads through the same use cases as the JSON
 * routes; its script changes things only through those routes, whose cookie-authenticated writes need this origin's `Origin`.
 */
export function registerDashboard(app: OpenAPIHono<AppEnv>): void {
  app.use(DASHBOARD_PATH, errorPolicy("Failed to show the dashboard"), rateLimit(rateLimits.dashboardPage));

  app.get(DASHBOARD_PATH, async (c) => {
    pageHeaders(c);
    const session = await pageSession(c);
    if (session.kind === "signed_out") return c.redirect(SIGN_IN_PATH, 302);
    if (session.kind === "blocked") {
      return c.html(<NoticePage title="Account suspended" message={ACCOUNT_BLOCKED_MESSAGE} />, 403);
    }
    const { db, clock } = c.get("deps");
    try {
      const [summary, programs] = await Promise.all([
        readSessionSummary(db, session.userId),
        listMyPrograms(db, session.userId),
      ]);
      const asked = c.req.query("program");
      const programId = asked === undefined ? programs[0]?.id : parseProgramId(asked);
      const chosen = programs.find((p) => p.id === programId);
      if (asked === undefined && programs.length === 0) {
        return c.html(<DashboardPage summary={summary} programs={programs} program={null} />, 200);
      }
      const groupBy = groupByOf(c.req.query("group_by"));
      const page = chosen
        ? await loadProgramPage(db, clock, { userId: session.userId, programId: chosen.id, groupBy })
        : null;
      if (!chosen || !page) {
        return c.html(
          <NoticePage
            title={PROGRAM_REFUSED_TITLE}
            message="You do not have access to this program. Choose one of your programs."
            action={{ href: DASHBOARD_PATH, label: "Back to the dashboard" }}
          />,
          403,
        );
      }
      const webhooks = await readProgramWebhooks(db, {
        userId: session.userId,
        programId: chosen.id,
        role: page.role,
        now: clock.now(),
      });
      return c.html(
        <DashboardPage
          summary={summary}
          programs={programs}
          program={{ id: chosen.id, name: chosen.name, page, groupBy, webhooks }}
        />,
        200,
      );
    } catch (error) {
      c.get("log").error("dashboard page failed", error);
      return c.html(
        <NoticePage
          title="Something went wrong"
          message="The dashboard could not be shown. Reload the page in a moment."
          requestId={c.get("requestId")}
          action={{ href: DASHBOARD_PATH, label: "Reload" }}
        />,
        500,
      );
    }
  });

  app.get(SIGNED_OUT_PATH, (c) => {
    pageHeaders(c);
    return c.html(
      <NoticePage
        title="Signed out"
        message="You are signed out of the dashboard."
        action={{ href: DASHBOARD_PATH, label: "Sign in again" }}
      />,
      200,
    );
  });

  registerDashboardStaticAssets(app);
}
