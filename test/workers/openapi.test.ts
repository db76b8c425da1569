import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../functions/api/app.ts";
import { openApiDocument } from "../../functions/api/openapi-document.ts";

describe("OpenAPI document and docs page", () => {
  it("describes every /api route the app serves, from the same schemas", async () => {
    const response = await SELF.fetch("https://api.test/openapi.json");
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<
        string,
        Record<
          string,
          {
            operationId?: string;
            security?: unknown[];
            requestBody?: unknown;
            responses: Record<string, unknown>;
          }
        >
      >;
      components: { schemas: Record<string, unknown> };
    };
    expect(document.openapi).toBe("3.1.0");
    const served = createApp()
      .routes.filter((route) => route.path.startsWith("/api/") && route.method !== "ALL")
      .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ key: `${method} ${path}`, operation })),
    );
    const documented = operations.map((o) => o.key).filter((key) => key.includes(" /api/"));
    expect(new Set(documented)).toEqual(new Set(served));
    // The events worker's route is served by the other worker on the same origin, and described too.
    expect(operations.map((o) => o.key)).toContain("post /webhooks/stripe");
    // Every operation names itself (unique ids for generated clients) and says what credential it takes.
    const ids = operations.map((o) => o.operation.operationId);
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths["/api/v1/track/click"]?.post?.operationId).toBe("postTrackClick");
    expect(operations.filter((o) => !Array.isArray(o.operation.security)).map((o) => o.key)).toEqual([]);
    const click = document.paths["/api/v1/track/click"]?.post;
    expect(Object.keys(click?.responses ?? {}).sort()).toEqual([
      "200",
      "400",
      "403",
      "410",
      "413",
      "429",
      "500",
    ]);
    expect(JSON.stringify(click?.requestBody)).toContain("#/components/schemas/ClickRequest");
    const clickRequest = document.components.schemas.ClickRequest as {
      required: string[];
      properties: object;
    };
    expect(clickRequest.required).toEqual(["affiliate_url"]);
    expect(Object.keys(clickRequest.properties)).toEqual(
      expect.arrayContaining(["affiliate_url", "program_id", "click_id", "additional_data"]),
    );
  });

  it("documents the dashboard routes with the session schemes and their refusals", async () => {
    const response = await SELF.fetch("https://api.test/openapi.json");
    const document = (await response.json()) as {
      paths: Record<string, Record<string, { security?: unknown; responses: Record<string, unknown> }>>;
    };
    const dashboard = Object.entries(document.paths).filter(([path]) => path.startsWith("/api/tracking/"));
    expect(dashboard.map(([path, item]) => `${Object.keys(item)[0]} ${path}`).sort()).toEqual([
      "get /api/tracking/events/{programId}",
      "get /api/tracking/performance/{programId}",
      "get /api/tracking/readiness/{programId}",
      "get /api/tracking/status/{programId}",
      "post /api/tracking/check-test-events",
      "post /api/tracking/run-verification/{programId}",
      "post /api/tracking/test",
    ]);
    for (const [, item] of dashboard) {
      for (const operation of Object.values(item)) {
        expect(operation.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }]);
        expect(Object.keys(operation.responses)).toEqual(
          expect.arrayContaining(["200", "400", "401", "403", "429", "500"]),
        );
      }
    }
  });

  it("documents the key rotation notice on every route a program key authenticates, and only there", async () => {
    const response = await SELF.fetch("https://api.test/openapi.json");
    const text = await response.text();
    const document = JSON.parse(text) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { headers?: object; content?: object }> }>
      >;
      components: { headers: Record<string, unknown>; schemas: Record<string, unknown> };
    };
    const noticed = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => "Deprecation" in (operation.responses["200"]?.headers ?? {}))
        .map(([method]) => `${method} ${path}`),
    );
    expect(noticed.sort()).toEqual([
      "get /api/v1/cli/status",
      "get /api/v1/programs/me/analytics/sources",
      "get /api/v1/programs/me/readiness",
      "post /api/v1/cli/test-event",
      "post /api/v1/track/lead",
      "post /api/v1/track/refund",
      "post /api/v1/track/sale",
    ]);
    for (const key of noticed) {
      const [method, path] = key.split(" ") as [string, string];
      const responses = document.paths[path]?.[method]?.responses ?? {};
      expect(Object.keys(responses["200"]?.headers ?? {})).toEqual(
        expect.arrayContaining(["Deprecation", "Sunset", "Link"]),
      );
      expect(JSON.stringify(responses["200"]?.content)).toContain('"warnings"');
      expect(JSON.stringify(responses["401"]?.content)).toContain("#/components/schemas/RetiredKeyError");
      // Given before the key is read: never the notice.
      expect(Object.keys(responses["429"]?.headers ?? {})).not.toContain("Deprecation");
    }
    expect(Object.keys(document.components.headers)).toEqual(["Deprecation", "Sunset", "Link"]);
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(["RotationWarning", "RetiredKeyError"]),
    );
    expect(text).not.toContain("x-key-rotation-notice");
  });

  it("serves the document written at build time: the bytes the routes generate, with the app's headers", async () => {
    const response = await SELF.fetch("https://api.test/openapi.json", {
      headers: { "X-Request-ID": "openapi-document-test" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/json");
    expect(response.headers.get("X-Request-ID")).toBe("openapi-document-test");
    // Generated here, in workerd, with the real generator (the tests' build keeps it; the deployed one not).
    expect((await response.text()) === JSON.stringify(openApiDocument(createApp()))).toBe(true);
  });

  it("renders a self-contained docs page", async () => {
    const response = await SELF.fetch("https://api.test/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toContain("text/html");
    const page = await response.text();
    expect(page).toContain("/api/v1/track/click");
    expect(page).not.toContain("<script");
  });
});
