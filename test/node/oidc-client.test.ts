import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IdentityConfig } from "../../lib/config/env.ts";
import { type IssuerMetadata, issuerMetadata } from "../../lib/identity/issuer-discovery.ts";
import { issuerKeys } from "../../lib/identity/issuer-keys.ts";
import {
  authorizationCode,
  authorizationUrl,
  exchangeCode,
  pkceChallenge,
  randomToken,
} from "../../lib/identity/oidc-client.ts";
import { verifyIdToken } from "../../lib/identity/verify-id-token.ts";
import {
  type Handler,
  json,
  type PathRoutedServer,
  startPathRoutedServer,
} from "../setup/path-routed-server.ts";

/**
 * The sign-in's OpenID client against an issuer that misbehaves on purpose: a tiny HTTP server on 127.0.0.1
 * serving each test its own issuer (a path of its own, so the per-isolate discovery cache never mixes them).
 * The happy path against the real provider is test/workers/sign-in.test.ts.
 */

let server: PathRoutedServer;
let origin = "";

beforeAll(async () => {
  server = await startPathRoutedServer();
  origin = server.origin;
});

afterAll(() => server.close());

let counter = 0;
/** A fresh issuer (its own path) whose requests `handler` answers. */
function testIssuer(handler: Handler): { issuer: string; name: string } {
  const name = `issuer-${++counter}`;
  server.handle(name, handler);
  return { issuer: `${origin}/${name}`, name };
}

function discoveryDocument(issuer: string, extra: Record<string, unknown> = {}) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/auth`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks`,
    ...extra,
  };
}

/** An issuer that serves a discovery document (built from its own URL) and answers other paths with `rest`. */
function issuerWith(
  document: (issuer: string) => Record<string, unknown>,
  rest: Handler = (_r, res) => void res.writeHead(404).end(),
) {
  let issuer = "";
  const created = testIssuer((request, res) => {
    if (request.path.endsWith("/.well-known/openid-configuration")) json(res, 200, document(issuer));
    else rest(request, res);
  });
  issuer = created.issuer;
  return created;
}

describe("discovery", () => {
  it("reads the endpoints, once per issuer; a failure is not cached", async () => {
    let fail = true;
    let issuer = "";
    ({ issuer } = testIssuer((_request, res) => {
      if (fail) json(res, 503, { error: "temporarily_unavailable" });
      else
        json(res, 200, discoveryDocument(issuer, { authorization_response_iss_parameter_supported: true }));
    }));
    await expect(issuerMetadata({ issuer })).rejects.toThrow(/answered 503/);
    fail = false;
    const metadata = await issuerMetadata({ issuer });
    expect(metadata).toEqual({
      issuer,
      authorizationEndpoint: new URL(`${issuer}/auth`),
      tokenEndpoint: new URL(`${issuer}/token`),
      jwksUri: new URL(`${issuer}/jwks`),
      issParameterSupported: true,
      idTokenAlgorithms: ["RS256"],
    });
    expect(await issuerMetadata({ issuer })).toBe(metadata);
    const name = new URL(issuer).pathname.slice(1);
    expect(server.requests(name).map((r) => r.path)).toEqual([
      `/${name}/.well-known/openid-configuration`,
      `/${name}/.well-known/openid-configuration`,
    ]);
  });

  it.each([
    ["an issuer that differs from the configured one", (i: string) => discoveryDocument(`${i}/`)],
    ["another issuer's document", (_i: string) => discoveryDocument("https://elsewhere.example")],
    ["no issuer", (i: string) => ({ ...discoveryDocument(i), issuer: undefined })],
    [
      "a plain-http token endpoint off loopback",
      (i: string) => discoveryDocument(i, { token_endpoint: "http://provider.example/token" }),
    ],
    [
      "a plain-http authorization endpoint off loopback",
      (i: string) => discoveryDocument(i, { authorization_endpoint: "http://provider.example/auth" }),
    ],
    [
      "a plain-http key set off loopback",
      (i: string) => discoveryDocument(i, { jwks_uri: "http://provider.example/jwks" }),
    ],
    ["no token endpoint", (i: string) => ({ ...discoveryDocument(i), token_endpoint: undefined })],
    ["a key set that is not a URL", (i: string) => discoveryDocument(i, { jwks_uri: "not a url" })],
  ])("refuses a document with %s", async (_case, document) => {
    const { issuer } = issuerWith(document);
    await expect(issuerMetadata({ issuer })).rejects.toThrow(/OpenID discovery/);
  });

  it("accepts https endpoints, and takes the announced ID token algorithms without 'none'", async () => {
    const { issuer } = issuerWith((i) => ({
      issuer: i,
      authorization_endpoint: "https://login.example/auth",
      token_endpoint: "https://login.example/token",
      jwks_uri: "https://login.example/jwks",
      id_token_signing_alg_values_supported: ["ES256", "none", "RS256"],
    }));
    const metadata = await issuerMetadata({ issuer });
    expect(metadata.tokenEndpoint.href).toBe("https://login.example/token");
    expect(metadata.idTokenAlgorithms).toEqual(["ES256", "RS256"]);
    expect(metadata.issParameterSupported).toBe(false);
  });

  it("refuses a plain-http issuer off loopback without asking it", async () => {
    await expect(issuerMetadata({ issuer: "http://provider.example" })).rejects.toThrow(/must be https/);
  });
});

const identity = (issuer: string, clientSecret?: string): IdentityConfig => ({
  issuer,
  clientId: "dashboard client",
  clientSecret,
});

describe("authorization request", () => {
  it("carries the code flow's parameters with an S256 challenge of a 32-byte verifier, and keeps the endpoint's own query", async () => {
    const { issuer } = issuerWith((i) =>
      discoveryDocument(i, { authorization_endpoint: `${i}/auth?tenant=t1` }),
    );
    const metadata = await issuerMetadata({ issuer });
    const codeVerifier = randomToken();
    expect(codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const url = await authorizationUrl(metadata, identity(issuer), {
      redirectUri: "https://api.test/api/v1/auth/callback",
      state: "the-state",
      nonce: "the-nonce",
      codeVerifier,
    });
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/auth`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      tenant: "t1",
      client_id: "dashboard client",
      redirect_uri: "https://api.test/api/v1/auth/callback",
      response_type: "code",
      scope: "openid email",
      state: "the-state",
      nonce: "the-nonce",
      code_challenge: createHash("sha256").update(codeVerifier).digest("base64url"),
      code_challenge_method: "S256",
    });
  });

  it("computes the RFC 7636 example challenge", async () => {
    expect(await pkceChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe(
      "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    );
  });
});

describe("authorization response (the callback's query, state already checked)", () => {
  const metadata = (issParameterSupported: boolean): IssuerMetadata => ({
    issuer: "https://login.example",
    authorizationEndpoint: new URL("https://login.example/auth"),
    tokenEndpoint: new URL("https://login.example/token"),
    jwksUri: new URL("https://login.example/jwks"),
    issParameterSupported,
    idTokenAlgorithms: ["RS256"],
  });
  const refused = { ok: false, reason: "provider_refused" };

  it.each([
    ["the provider's error", "state=s&error=access_denied", false],
    ["no code", "state=s", false],
    ["an empty code", "state=s&code=", false],
    ["an iss of another issuer (mix-up)", "state=s&code=c&iss=https%3A%2F%2Fevil.example", false],
    ["no iss although the provider promises one (RFC 9207)", "state=s&code=c", true],
    ["two iss", "state=s&code=c&iss=https%3A%2F%2Flogin.example&iss=https%3A%2F%2Fevil.example", true],
    ["two codes", "state=s&code=c&code=d", false],
    ["an implicit flow's id_token", "state=s&code=c&id_token=x", false],
    ["a JARM response", "state=s&response=x", false],
  ])("refuses %s", (_case, query, issSupported) => {
    expect(authorizationCode(metadata(issSupported), new URLSearchParams(query))).toEqual(refused);
  });

  it.each([
    ["with the issuer's iss", "state=s&code=c&iss=https%3A%2F%2Flogin.example", true],
    ["without iss from a provider that does not promise it", "state=s&code=c", false],
  ])("accepts a code %s", (_case, query, issSupported) => {
    expect(authorizationCode(metadata(issSupported), new URLSearchParams(query))).toEqual({
      ok: true,
      code: "c",
    });
  });
});

describe("token request", () => {
  const grant = { code: "the code", redirectUri: "https://api.test/api/v1/auth/callback", codeVerifier: "v" };

  async function tokenIssuer(answer: Handler) {
    const created = issuerWith(discoveryDocument, (request, res) => {
      if (request.path.endsWith("/token")) answer(request, res);
      else res.writeHead(404).end();
    });
    return { ...created, metadata: await issuerMetadata({ issuer: created.issuer }) };
  }
  const tokenRequests = (name: string) => server.requests(name).filter((r) => r.path.endsWith("/token"));

  it("a confidential client: client_secret_basic with the id and secret form-urlencoded (RFC 6749 2.3.1)", async () => {
    const { issuer, name, metadata } = await tokenIssuer((_r, res) =>
      json(res, 200, { access_token: "a", token_type: "Bearer", id_token: "the.id.token" }),
    );
    const secret = "s3cr:t +/%é";
    expect(await exchangeCode(metadata, identity(issuer, secret), grant)).toEqual({
      ok: true,
      idToken: "the.id.token",
    });
    const [request] = tokenRequests(name);
    expect(request?.method).toBe("POST");
    expect(request?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(request?.body))).toEqual({
      grant_type: "authorization_code",
      code: "the code",
      redirect_uri: "https://api.test/api/v1/auth/callback",
      code_verifier: "v",
    });
    const basic = Buffer.from((request?.headers.authorization ?? "").replace(/^Basic /, ""), "base64")
      .toString("utf8")
      .split(":");
    expect(basic).toEqual(["dashboard+client", "s3cr%3At+%2B%2F%25%C3%A9"]);
    const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, " "));
    expect(basic.map(decode)).toEqual(["dashboard client", secret]);
  });

  it("a public client: client_id in the body, no Authorization header", async () => {
    const { issuer, name, metadata } = await tokenIssuer((_r, res) =>
      json(res, 200, { access_token: "a", token_type: "bearer", id_token: "the.id.token" }),
    );
    expect(await exchangeCode(metadata, identity(issuer), grant)).toEqual({
      ok: true,
      idToken: "the.id.token",
    });
    const [request] = tokenRequests(name);
    expect(request?.headers.authorization).toBeUndefined();
    expect(new URLSearchParams(request?.body).get("client_id")).toBe("dashboard client");
  });

  it.each([
    ["an error status", (res: ServerResponse) => json(res, 400, { error: "invalid_grant" })],
    ["a 201", (res: ServerResponse) => json(res, 201, { token_type: "Bearer", id_token: "x.y.z" })],
    ["a redirect", (res: ServerResponse) => void res.writeHead(302, { Location: "/elsewhere" }).end()],
    ["a body that is not JSON", (res: ServerResponse) => void res.writeHead(200).end("<html>")],
    ["a JSON body that is not an object", (res: ServerResponse) => json(res, 200, "id_token")],
    ["no id_token", (res: ServerResponse) => json(res, 200, { access_token: "a", token_type: "Bearer" })],
    [
      "a token type other than Bearer",
      (res: ServerResponse) => json(res, 200, { access_token: "a", token_type: "DPoP", id_token: "x.y.z" }),
    ],
    ["no token type", (res: ServerResponse) => json(res, 200, { access_token: "a", id_token: "x.y.z" })],
  ])("refuses %s as the provider's refusal", async (_case, answer) => {
    const { issuer, metadata } = await tokenIssuer((_r, res) => answer(res));
    expect(await exchangeCode(metadata, identity(issuer, "secret"), grant)).toEqual({
      ok: false,
      reason: "provider_refused",
    });
  });

  it("gives up on a token endpoint that does not answer in time", async () => {
    const { issuer, metadata } = await tokenIssuer(() => {});
    const started = Date.now();
    expect(await exchangeCode(metadata, identity(issuer, "secret"), grant, 300)).toEqual({
      ok: false,
      reason: "provider_refused",
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("ID token audience: several audiences need azp = the client (OIDC Core 3.1.3.7)", () => {
  let issuer = "";
  let privateKey: CryptoKey;

  beforeAll(async () => {
    const pair = await generateKeyPair("RS256");
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    ({ issuer } = issuerWith(discoveryDocument, (request, res) => {
      if (request.path.endsWith("/jwks")) json(res, 200, { keys: [jwk] });
      else res.writeHead(404).end();
    }));
  });

  async function token(claims: Record<string, unknown>, alg = "RS256") {
    return new SignJWT({ sub: "person-1", nonce: "n", ...claims })
      .setProtectedHeader({ alg, kid: "k1" })
      .setIssuer(issuer)
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(privateKey);
  }

  async function verdict(idToken: string, algorithms?: string[]) {
    return verifyIdToken(idToken, {
      issuer,
      audience: "dashboard",
      keys: await issuerKeys(identity(issuer)),
      nonce: "n",
      now: new Date(),
      ...(algorithms ? { algorithms } : {}),
    });
  }

  it.each([
    ["one audience, no azp", { aud: "dashboard" }, true],
    ["one audience in a list, no azp", { aud: ["dashboard"] }, true],
    ["several audiences, azp the client", { aud: ["dashboard", "other"], azp: "dashboard" }, true],
    ["several audiences, no azp", { aud: ["dashboard", "other"] }, false],
    ["several audiences, azp another client", { aud: ["dashboard", "other"], azp: "other" }, false],
  ])("%s", async (_case, claims, accepted) => {
    const result = await verdict(await token(claims));
    expect(result.ok).toBe(accepted);
    if (!accepted) expect(result).toEqual({ ok: false, reason: "invalid_id_token" });
  });

  it("refuses a signature algorithm the issuer did not announce", async () => {
    const idToken = await token({ aud: "dashboard" });
    expect((await verdict(idToken, ["RS256"])).ok).toBe(true);
    expect(await verdict(idToken, ["ES256"])).toEqual({ ok: false, reason: "invalid_id_token" });
  });
});
