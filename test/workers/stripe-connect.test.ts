import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { PROGRAM_ACCESS_REFUSED } from "../../lib/auth/require-program-membership.ts";
import { startStripeConnect } from "../../lib/stripe/connect-oauth.ts";
import { auditLog } from "../../schema/index.ts";
import { BASE, call } from "./dashboard-sign-in.ts";
import { db } from "./harness.ts";
import { type OwnedProgram, ownerWithProgram, platform, signedInPerson } from "./program-admin-harness.ts";

/**
 * The Connect OAuth flow: the start route sends the browser to the provider; the callback exchanges the code
 * at the provider's documented token endpoint, here the local stand-in of it reached
 * through its host/port/protocol settings (test/setup/local-services.ts).
 */
async function start(owner: OwnedProgram): Promise<string> {
  const response = await call("GET", `/api/v1/programs/${owner.programId}/stripe-connect`, {
    cookie: owner.token,
  });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("Location") ?? "").searchParams.get("state") ?? "";
}

const callback = (token: string, query: Record<string, string>) =>
  call("GET", `/api/v1/programs/stripe-connect/callback?${new URLSearchParams(query)}`, { cookie: token });

const suffix = () => crypto.randomUUID().replace(/-/g, "").slice(0, 16);

describe("payments provider Connect OAuth", () => {
  it("start redirects to connect.stripe.com with a state; the callback connects the account", async () => {
    const owner = await ownerWithProgram();
    const response = await call("GET", `/api/v1/programs/${owner.programId}/stripe-connect`, {
      cookie: owner.token,
    });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("Location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe("https://connect.stripe.com/oauth/authorize");
    expect(Object.fromEntries(location.searchParams)).toEqual({
      response_type: "code",
      client_id: "ca_test_platform",
      scope: "read_write",
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      redirect_uri: `${BASE}/api/v1/programs/stripe-connect/callback`,
    });

    const id = suffix();
    const back = await callback(owner.token, {
      code: `ac_${id}`,
      state: location.searchParams.get("state")!,
    });
    expect(back.status).toBe(303);
    expect(back.headers.get("Location")).toBe(`/api/v1/programs/${owner.programId}/settings`);
    const settings = await call("GET", `/api/v1/programs/${owner.programId}/settings`, {
      token: owner.token,
    });
    expect(settings.body.data.settings.stripe_account_id).toBe(`acct_${id}`);
    const audit = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.programId, owner.programId), eq(auditLog.action, "program.settings_changed")));
    expect(audit.map((a) => a.changes)).toEqual([{ stripe_account_id: { from: null, to: `acct_${id}` } }]);

    // The state is used once.
    const replay = await callback(owner.token, {
      code: `ac_${suffix()}`,
      state: location.searchParams.get("state")!,
    });
    expect(replay.body).toEqual(
      platform(400, "Connection expired, was already used or was started by someone else. Start again."),
    );

    // Disconnecting is a settings change.
    const off = await call("PATCH", `/api/v1/programs/${owner.programId}/settings`, {
      token: owner.token,
      body: { stripe_account_id: null },
    });
    expect(off.body.data.settings.stripe_account_id).toBeNull();
  });

  const refusals: [
    string,
    (owner: OwnedProgram, state: string) => Promise<Record<string, string> & { as?: string }>,
    number,
    string,
  ][] = [
    [
      "a code the provider does not know",
      async (_, state) => ({ code: "not-a-code", state }),
      400,
      "The payments provider did not accept the authorization. Start again.",
    ],
    [
      "the person declined at the provider",
      async (_, state) => ({
        error: "access_denied",
        error_description: "The user denied your request",
        state,
      }),
      400,
      "The connection was not approved at the payments provider",
    ],
    [
      "no state",
      async () => ({ code: `ac_${suffix()}` }),
      400,
      "Connection expired, was already used or was started by someone else. Start again.",
    ],
    [
      "an unknown state",
      async () => ({ code: `ac_${suffix()}`, state: "made-up-state" }),
      400,
      "Connection expired, was already used or was started by someone else. Start again.",
    ],
    [
      "another person's state",
      async (_, state) => ({ code: `ac_${suffix()}`, state, as: (await signedInPerson()).token }),
      400,
      "Connection expired, was already used or was started by someone else. Start again.",
    ],
  ];
  it.each(refusals)("callback refuses %s", async (_, query, status, message) => {
    const owner = await ownerWithProgram();
    const state = await start(owner);
    const { as, ...params } = await query(owner, state);
    const response = await callback(as ?? owner.token, params);
    expect(response.status).toBe(status);
    expect(response.body).toEqual(platform(status, message));
    const settings = await call("GET", `/api/v1/programs/${owner.programId}/settings`, {
      token: owner.token,
    });
    expect(settings.body.data.settings.stripe_account_id).toBeNull();
  });

  // A parameter sent twice reached the handler's schema as a list: 400 `Invalid input: expected string,
  // received array`, which names no field.
  it.each(["state", "code", "error", "error_description", "scope"])(
    "callback refuses %s sent twice, naming it",
    async (name) => {
      const owner = await ownerWithProgram();
      const state = await start(owner);
      const query = new URLSearchParams({ state, code: `ac_${suffix()}` });
      query.set(name, "one");
      query.append(name, "two");
      const response = await call("GET", `/api/v1/programs/stripe-connect/callback?${query}`, {
        cookie: owner.token,
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(platform(400, `${name} must be given once, as a string`));
    },
  );

  it("an account already connected to another program answers 409", async () => {
    const first = await ownerWithProgram();
    const second = await ownerWithProgram();
    const id = suffix();
    expect((await callback(first.token, { code: `ac_${id}`, state: await start(first) })).status).toBe(303);
    const taken = await callback(second.token, { code: `ac_${id}`, state: await start(second) });
    expect(taken.body).toEqual(platform(409, "stripe_account_id is already connected to another program"));
  });

  it("start refuses another workspace's program and a request without sign-in", async () => {
    const owner = await ownerWithProgram();
    const stranger = await signedInPerson();
    const foreign = await call("GET", `/api/v1/programs/${owner.programId}/stripe-connect`, {
      cookie: stranger.token,
    });
    expect(foreign.body).toEqual(platform(403, PROGRAM_ACCESS_REFUSED));
    const anonymous = await call("GET", `/api/v1/programs/${owner.programId}/stripe-connect`);
    expect(anonymous.body).toEqual(platform(401, "Sign-in required"));
  });

  it("on a deployment without Connect configured: a stranger is refused (403), only a member meets the 500", async () => {
    const owner = await ownerWithProgram();
    const stranger = await signedInPerson();
    const input = (userId: number) => ({
      userId,
      programId: owner.programId,
      redirectUri: `${BASE}/api/v1/programs/stripe-connect/callback`,
      now: new Date(),
    });
    expect(await startStripeConnect(db, undefined, input(stranger.userId))).toEqual({
      ok: false,
      reason: "no_access",
    });
    await expect(startStripeConnect(db, undefined, input(owner.userId))).rejects.toThrow(
      "payments provider Connect is not configured",
    );
  });
});
