import type { OpenAPIHono } from "@hono/zod-openapi";
import { html, raw } from "hono/html";
import type { AppEnv } from "../../../lib/http/app-env.ts";
import { openApiDocumentText } from "../openapi-asset.ts";
import { documentInfo } from "../openapi-info.ts";

interface OperationLike {
  summary?: string;
  description?: string;
  responses?: Record<string, { description?: string }>;
}

interface DocumentLike {
  paths?: Record<string, unknown>;
}

/**
 * `/openapi.json` is generated from the same zod schemas that validate requests, at build time (a test fails
 * when the checked-in document is not what the routes generate), so it cannot drift from the routes; the
 * worker serves it from its static assets. `/docs` renders that document as a plain page with no external
 * scripts (works offline).
 */
export function registerDocs(app: OpenAPIHono<AppEnv>): void {
  app.get("/openapi.json", async (c) =>
    c.body(await openApiDocumentText(c.env, c.req.url), 200, { "Content-Type": "application/json" }),
  );

  app.get("/docs", async (c) => {
    const document = JSON.parse(await openApiDocumentText(c.env, c.req.url)) as DocumentLike;
    const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item as Record<string, OperationLike>).map(([method, operation]) => ({
        path,
        method,
        operation,
      })),
    );
    return c.html(html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${documentInfo.info.title}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
code{background:#f3f3f3;padding:0 .25rem;border-radius:3px}
section{border-top:1px solid #ddd;padding:.5rem 0}
.method{font-weight:700;text-transform:uppercase;margin-right:.5rem}
li{margin:.15rem 0}
</style>
</head>
<body>
<h1>${documentInfo.info.title}</h1>
<p>${documentInfo.info.description} The machine-readable description is at <a href="/openapi.json"><code>/openapi.json</code></a> (OpenAPI 3.1).</p>
${raw(
  operations
    .map(
      ({ path, method, operation }) => html`<section>
<h2><span class="method">${method}</span><code>${path}</code></h2>
<p><strong>${operation.summary ?? ""}</strong></p>
<p>${operation.description ?? ""}</p>
<ul>${raw(
        Object.entries(operation.responses ?? {})
          .map(([status, response]) => html`<li><code>${status}</code> ${response.description ?? ""}</li>`)
          .join(""),
      )}</ul>
</section>`,
    )
    .join(""),
)}
</body>
</html>`);
  });
}
