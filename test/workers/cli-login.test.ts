import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { pollLogin } from "../../lib/cli/poll-login.ts";
import { fixedClock } from "../../lib/clock.ts";
import { cliLoginSessions, cliLoginTokens } from "../../schema/cli-login.ts";
import { cli, createPerson, loginTokenFor, markSignedIn, startSession } from "./cli-harness.ts";
import { db, freshIp } from "./harness.ts";

const poll = (state: string) => cli("GET", `/api/v1/cli/auth/poll?state=${encodeURIComponent(state)}`);

describe("command-line login: start and poll", () => {
  it("starts a 5-minute session with a state, a sign-in URL carrying a secret of its own and a short code", async () => {
    const before = Date.now();
    const started = await cli("POST", "/api/v1/cli/auth/start");
    expect(started.status).toBe(200);
    const data = started.body.data as Record<string, string | number>;
    expect(started.body.success).toBe(true);
    expect(String(data.state)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(String(data.user_code)).toMatch(/^[B-Z]{4}-[B-Z]{4}$/);
    const url = new URL(String(data.verification_url));
    expect(url.pathname).toBe("/cli/login");
    expect(url.searchParams.has("state")).toBe(false);
    const linkSecret = url.searchParams.get("login") ?? "";
    expect(linkSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(linkSecret).not.toBe(data.state);
    expect(url.searchParams.get("code")).toBe(data.user_code);
    expect(data.poll_interval_seconds).toBe(2);
    const lifetime = new Date(String(data.expires_at)).getTime() - before;
    expect(lifetime).toBeGreaterThan(299_000);
    expect(lifetime).toBeLessThanOrEqual(301_000);
    expect(started.headers.get("X-Request-ID")).toMatch(/^req_/);
    expect(started.headers.get("X-RateLimit-Limit")).toBe("60");
    // Only the hashes of the state and of the link's secret are stored.
    const [row] = await db
      .select()
      .from(cliLoginSessions)
      .where(eq(cliLoginSessions.stateHash, await sha256Hex(String(data.state))));
    expect(row).toMatchObject({ status: "pending", userId: null, browserHash: await sha256Hex(linkSecret) });
  });

  it("answers pending, then hands the token out once; a second poll is refused", async () => {
    const person = await createPerson();
    const { state } = await startSession();
    expect((await poll(state)).body).toEqual({ success: true, data: { status: "pending" } });
    await markSignedIn(state, person.userId);
    const first = await poll(state);
    expect(first.status).toBe(200);
    const data = first.body.data as { status: string; token: string; expires_at: string; email: string };
    expect(data.status).toBe("complete");
    expect(data.email).toBe(person.email);
    expect(data.token).toMatch(/^atl_[A-Za-z0-9_-]{43}$/);
    const days = (new Date(data.expires_at).getTime() - Date.now()) / 86_400_000;
    expect(Math.round(days)).toBe(90);
    const [stored] = await db
      .select()
      .from(cliLoginTokens)
      .where(eq(cliLoginTokens.tokenHash, await sha256Hex(data.token)));
    expect(stored).toMatchObject({
      userId: person.userId,
      tokenPrefix: data.token.slice(0, 10),
      revokedAt: null,
    });

    const second = await poll(state);
    expect(second.status).toBe(400);
    expect(second.body).toEqual({
      data: null,
      error: { status: 400, name: "BadRequestError", message: "Session already consumed", details: {} },
    });
  });

  it("two concurrent polls after sign-in: exactly one gets the token", async () => {
    const person = await createPerson();
    const { state } = await startSession();
    await markSignedIn(state, person.userId);
    const answers = await Promise.all([poll(state), poll(state), poll(state)]);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 400)).toHaveLength(2);
  });

  it("expires after 5 minutes (injected clock): pending and signed-in sessions answer expired", async () => {
    const person = await createPerson();
    const waiting = await startSession();
    const signedIn = await startSession();
    await markSignedIn(signedIn.state, person.userId);
    const [row] = await db
      .select()
      .from(cliLoginSessions)
      .where(eq(cliLoginSessions.stateHash, await sha256Hex(waiting.state)));
    const justBefore = fixedClock(new Date(row!.expiresAt.getTime() - 1));
    const atExpiry = fixedClock(row!.expiresAt);
    expect(await pollLogin(db, justBefore, waiting.state)).toEqual({ outcome: "pending" });
    expect(await pollLogin(db, atExpiry, waiting.state)).toEqual({ outcome: "expired" });
    const later = fixedClock(new Date(row!.expiresAt.getTime() + 60_000));
    expect(await pollLogin(db, later, signedIn.state)).toEqual({ outcome: "expired" });
    // An expired session still answers 200 with `data.status` expired over HTTP.
    await db
      .update(cliLoginSessions)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(cliLoginSessions.stateHash, await sha256Hex(waiting.state)));
    expect((await poll(waiting.state)).body).toEqual({ success: true, data: { status: "expired" } });
  });

  it("logout revokes the token; the next use of it is refused", async () => {
    const person = await createPerson();
    const { state } = await startSession();
    await markSignedIn(state, person.userId);
    const token = ((await poll(state)).body.data as { token: string }).token;
    const out = await cli("POST", "/api/v1/cli/auth/logout", { token });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ success: true, data: { logged_out: true } });
    const [stored] = await db
      .select()
      .from(cliLoginTokens)
      .where(eq(cliLoginTokens.tokenHash, await sha256Hex(token)));
    expect(stored?.revokedAt).not.toBeNull();
    // Idempotent: again, and with a token that never existed.
    expect((await cli("POST", "/api/v1/cli/auth/logout", { token })).status).toBe(200);
    expect((await cli("POST", "/api/v1/cli/auth/logout", { token: "atl_made_up" })).status).toBe(200);
  });
});

describe("rate limit headers of a login token", () => {
  // The spec's bucket is the token's: its headers show its own count from its first request, a refused init's
  // and a malformed body's included, whatever made-up tokens its address sent before.
  it("shows the token's own bucket from its first request, a refused init and a malformed body included", async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const token = await loginTokenFor((await createPerson()).userId);
      const ip = freshIp();
      const answers = [];
      for (let i = 0; i < 3; i++) {
        answers.push(
          await cli("GET", "/api/v1/cli/programs", { token: `atl_madeup${crypto.randomUUID()}`, ip }),
        );
      }
      answers.push(await cli("POST", "/api/v1/cli/init", { token, ip, body: "{" }));
      answers.push(await cli("POST", "/api/v1/cli/init", { token, ip, body: {} }));
      if (new Set(answers.map((a) => a.headers.get("X-RateLimit-Reset"))).size !== 1) continue;
      expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 400, 400]);
      expect(answers.map((a) => a.headers.get("X-RateLimit-Remaining"))).toEqual([
        "59",
        "59",
        "59",
        "59",
        "58",
      ]);
      return;
    }
    throw new Error("the rate-limit window rolled over in three attempts in a row");
  });
});
