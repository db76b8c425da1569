import { describe, expect, inject, it } from "vitest";
import { cli } from "./cli-harness.ts";
import { unique } from "./harness.ts";
import { obtainIdToken } from "./oidc-sign-in.ts";

const oidc = inject("oidc");

describe("command-line login end to end against the local OpenID provider", () => {
  it("start, sign in at the provider, callback, one poll for the token, init, programs; a second poll is refused", async () => {
    const email = `${unique("new-dev")}@brand.example`;
    const started = await cli("POST", "/api/v1/cli/auth/start");
    const { state, user_code } = started.body.data as { state: string; user_code: string };
    expect((await cli("GET", `/api/v1/cli/auth/poll?state=${state}`)).body).toEqual({
      success: true,
      data: { status: "pending" },
    });

    // The browser step: the provider's own sign-in page and interaction endpoints, a real signed ID token.
    const idToken = await obtainIdToken(
      { issuer: oidc.issuer, clientId: oidc.cliClientId, redirectUri: "http://127.0.0.1:53682/callback" },
      { email, verified: true },
    );
    const callback = await cli("POST", "/api/v1/cli/auth/callback", { body: { state, id_token: idToken } });
    expect(callback.status).toBe(200);
    expect(callback.body).toEqual({ success: true, data: { status: "completed", user_code } });
    // The state is used once.
    const again = await cli("POST", "/api/v1/cli/auth/callback", { body: { state, id_token: idToken } });
    expect(again.status).toBe(404);

    const polled = await cli("GET", `/api/v1/cli/auth/poll?state=${state}`);
    const data = polled.body.data as { status: string; token: string; email: string };
    expect(data).toMatchObject({ status: "complete", email });
    expect((await cli("GET", `/api/v1/cli/auth/poll?state=${state}`)).body).toMatchObject({
      error: { status: 400, message: "Session already consumed" },
    });

    // The first sign-in provisioned a workspace: init creates a program there, programs lists it.
    expect((await cli("GET", "/api/v1/cli/programs", { token: data.token })).body).toEqual({
      success: true,
      data: { programs: [] },
    });
    const created = await cli("POST", "/api/v1/cli/init", {
      token: data.token,
      body: {
        name: "Acme",
        domain: "https://Acme.example/pricing",
        commission_type: "recurring_percent",
        commission_rate: 25,
        duration_months: 12,
        cookie_duration: 30,
      },
    });
    expect(created.status).toBe(200);
    const program = created.body.data as {
      program: Record<string, unknown>;
      api_key: string;
      test_api_key: string;
    };
    expect(program.program).toMatchObject({
      name: "Acme",
      domain: "acme.example",
      commission_type: "recurring_percent",
      commission_rate: 25,
      duration_months: 12,
      cookie_duration: 30,
    });
    expect(program.api_key).toMatch(/^sk_live_/);
    expect(program.test_api_key).toMatch(/^sk_test_/);
    const listed = await cli("GET", "/api/v1/cli/programs", { token: data.token });
    expect((listed.body.data as { programs: { id: number }[] }).programs.map((p) => p.id)).toEqual([
      program.program.id,
    ]);
    // The new key works on status at once.
    expect((await cli("GET", "/api/v1/cli/status", { token: program.api_key })).body).toMatchObject({
      data: { program: { id: program.program.id }, verified: false },
    });

    // Logout revokes the token: programs refuses it afterwards.
    await cli("POST", "/api/v1/cli/auth/logout", { token: data.token });
    expect((await cli("GET", "/api/v1/cli/programs", { token: data.token })).body).toMatchObject({
      error: { status: 401, message: "Invalid or expired token" },
    });
  });

  it("a refused sign-in ends the login: its poll answers the 403, and a later sign-in cannot complete it", async () => {
    const started = await cli("POST", "/api/v1/cli/auth/start");
    const { state } = started.body.data as { state: string };
    const idToken = (email: string, verified: boolean) =>
      obtainIdToken(
        { issuer: oidc.issuer, clientId: oidc.cliClientId, redirectUri: "http://127.0.0.1:53682/callback" },
        { email, verified },
      );
    const email = `${unique("unverified")}@brand.example`;
    const refused = await cli("POST", "/api/v1/cli/auth/callback", {
      body: { state, id_token: await idToken(email, false) },
    });
    expect(refused.status).toBe(403);
    const polled = await cli("GET", `/api/v1/cli/auth/poll?state=${state}`);
    expect(polled.status).toBe(403);
    expect(polled.body).toEqual(refused.body);

    // The tool stopped polling: a sign-in with the same link, even an acceptable one, reaches nobody.
    const later = await cli("POST", "/api/v1/cli/auth/callback", {
      body: { state, id_token: await idToken(email, true) },
    });
    expect(later.status).toBe(404);
    expect(later.body).toMatchObject({ error: { message: "Session not found or already used" } });
    expect((await cli("GET", `/api/v1/cli/auth/poll?state=${state}`)).body).toEqual(refused.body);
  });

  it("one ID token signs in one login session: replayed on another, it is refused and that session stays pending", async () => {
    const email = `${unique("replay")}@brand.example`;
    const idToken = await obtainIdToken(
      { issuer: oidc.issuer, clientId: oidc.cliClientId, redirectUri: "http://127.0.0.1:53682/callback" },
      { email, verified: true },
    );
    const states: string[] = [];
    for (let i = 0; i < 2; i++) {
      const started = await cli("POST", "/api/v1/cli/auth/start");
      states.push((started.body.data as { state: string }).state);
    }
    const first = await cli("POST", "/api/v1/cli/auth/callback", {
      body: { state: states[0], id_token: idToken },
    });
    expect(first.status).toBe(200);
    const replayed = await cli("POST", "/api/v1/cli/auth/callback", {
      body: { state: states[1], id_token: idToken },
    });
    expect(replayed.status).toBe(401);
    expect(replayed.body).toMatchObject({
      data: null,
      error: { status: 401, name: "UnauthorizedError", message: "Invalid or expired id_token" },
    });
    expect((await cli("GET", `/api/v1/cli/auth/poll?state=${states[1]}`)).body).toEqual({
      success: true,
      data: { status: "pending" },
    });
  });
});
