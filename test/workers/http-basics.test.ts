import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createProgram, freshIp, postJson } from "./harness.ts";

describe("X-Request-ID", () => {
  it("is on success, error and not-found responses, and unique per request", async () => {
    const p = await createProgram();
    const ok = await postJson("/api/v1/track/click", {
      affiliate_url: `https://s.example/?aff=${p.links[0]}`,
    });
    const bad = await postJson("/api/v1/track/click", {});
    const missing = await SELF.fetch("https://api.test/api/v1/nothing-here");
    const ids = [ok.headers, bad.headers, missing.headers].map((h) => h.get("X-Request-ID"));
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
    expect(new Set(ids).size).toBe(3);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      data: null,
      error: { status: 404, name: "NotFoundError", message: "Not found", details: {} },
    });
  });

  it("keeps a well-formed id sent by the caller and replaces a malformed one", async () => {
    const kept = await postJson("/api/v1/track/click", {}, { "X-Request-ID": "brand-trace-0001" });
    expect(kept.headers.get("X-Request-ID")).toBe("brand-trace-0001");
    const replaced = await postJson("/api/v1/track/click", {}, { "X-Request-ID": "bad id with spaces" });
    expect(replaced.headers.get("X-Request-ID")).toMatch(/^req_/);
  });
});

describe("another method on a tracking path", () => {
  it.each([
    ["/api/v1/track/sale", "GET", { code: "not_found" }],
    ["/api/v1/track/refund", "PUT", { code: "not_found" }],
    // Routes without stable codes answer the plain 404.
    ["/api/v1/track/click", "GET", {}],
  ])("%s %s: 404 in the path's own envelope", async (path, method, code) => {
    const p = await createProgram();
    const response = await SELF.fetch(`https://api.test${path}`, {
      method,
      headers: { Authorization: `Bearer ${p.apiKey}`, "CF-Connecting-IP": freshIp() },
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      data: null,
      error: { status: 404, name: "NotFoundError", message: "Not found", details: {}, ...code },
    });
  });

  it("readiness: 404 in the typed envelope, as all its errors", async () => {
    const p = await createProgram();
    const response = await SELF.fetch("https://api.test/api/v1/programs/me/readiness", {
      method: "POST",
      headers: { Authorization: `Bearer ${p.apiKey}`, "CF-Connecting-IP": freshIp() },
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: "not_found", message: "Not found" } });
  });
});

describe("CORS on the browser routes", () => {
  const preflight = (origin: string) =>
    SELF.fetch("https://api.test/api/v1/track/click", {
      method: "OPTIONS",
      headers: {
        Origin: origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
      },
    });

  it.each([
    ["/api/v1/track/click", "60"],
    ["/api/v1/track/lead", "30"],
    ["/api/v1/track/visit", "120"],
    ["/api/v1/track/config", "60"],
  ])(
    "a preflight of %s carries the IP bucket's X-RateLimit-* headers and is not counted",
    async (path, limit) => {
      const ip = freshIp();
      const send = (method: string) =>
        SELF.fetch(`https://api.test${path}`, {
          method,
          headers: { Origin: "https://unlisted.example", "CF-Connecting-IP": ip },
        });
      for (let i = 0; i < 3; i++) {
        const answer = await send("OPTIONS");
        expect(answer.status).toBe(204);
        expect(answer.headers.get("X-RateLimit-Limit")).toBe(limit);
        expect(answer.headers.get("X-RateLimit-Remaining")).toBe(limit);
        expect(Number(answer.headers.get("X-RateLimit-Reset"))).toBeGreaterThan(Date.now() / 1000);
        expect(answer.headers.get("Retry-After")).toBeNull();
      }
      // The call itself is counted (whatever it answers), and the next preflight shows it.
      expect(
        (await send(path.endsWith("config") ? "GET" : "POST")).headers.get("X-RateLimit-Remaining"),
      ).toBe(String(Number(limit) - 1));
      expect((await send("OPTIONS")).headers.get("X-RateLimit-Remaining")).toBe(String(Number(limit) - 1));
    },
  );

  it("grants a preflight to an origin a program allows, and not to its 127.0.0.1 twin", async () => {
    const port = 20000 + Math.floor(Math.random() * 40000);
    await createProgram({ allowedOrigins: [`http://localhost:${port}`] });
    const allowed = await preflight(`http://localhost:${port}`);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("Access-Control-Allow-Origin")).toBe(`http://localhost:${port}`);
    expect(allowed.headers.get("Access-Control-Allow-Methods")).toContain("POST");
    expect(allowed.headers.get("Access-Control-Allow-Headers")).toContain("Content-Type");
    const twin = await preflight(`http://127.0.0.1:${port}`);
    expect(twin.status).toBe(204);
    expect(twin.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("lets the page read a click response only when the link's program allows its origin", async () => {
    const p = await createProgram();
    const other = await createProgram();
    const body = { affiliate_url: `https://s.example/?aff=${p.links[0]}` };
    const own = await postJson("/api/v1/track/click", body, { Origin: p.origin });
    expect(own.status).toBe(200);
    expect(own.headers.get("Access-Control-Allow-Origin")).toBe(p.origin);
    expect(own.headers.get("Access-Control-Expose-Headers")).toContain("X-Request-ID");
    const foreign = await postJson("/api/v1/track/click", body, { Origin: other.origin });
    expect(foreign.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("lets an allowed page read a validation error", async () => {
    const p = await createProgram();
    const response = await postJson("/api/v1/track/click", {}, { Origin: p.origin });
    expect(response.status).toBe(400);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe(p.origin);
  });

  it("does not count preflights against the rate limit", async () => {
    const ip = freshIp();
    await SELF.fetch("https://api.test/api/v1/track/click", {
      method: "OPTIONS",
      headers: { "CF-Connecting-IP": ip },
    });
    const response = await postJson("/api/v1/track/click", {}, { "CF-Connecting-IP": ip });
    expect(response.headers.get("X-RateLimit-Remaining")).toBe("59");
  });
});
