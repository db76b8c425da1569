import type { ServerResponse } from "node:http";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { KEY_SET_COOLDOWN_MS, KEY_SET_MAX_AGE_MS, remoteKeySet } from "../../lib/identity/remote-key-set.ts";
import {
  ID_TOKEN_CLOCK_SKEW_SECONDS,
  ID_TOKEN_MAX_AGE_SECONDS,
  type IdTokenExpectations,
  verifyIdToken,
} from "../../lib/identity/verify-id-token.ts";
import { ID_TOKEN_ALGORITHMS, type IdTokenAlgorithm } from "../setup/jws-algorithms.ts";
import { json, type PathRoutedServer, startPathRoutedServer } from "../setup/path-routed-server.ts";

/**
 * The ID token check on WebCrypto (lib/identity/verify-jws.ts, remote-key-set.ts, verify-id-token.ts) against
 * tokens `jose` signs, for every algorithm it accepts, with the issuer's key set served by a real HTTP server
 * on 127.0.0.1 (one path per key set, so the per-isolate cache never mixes them; requests are counted). The
 * tokens a rule must refuse are made by hand where `jose` would not sign them (a 1024-bit key, `crit`), with
 * a valid signature, so only the rule under test refuses them.
 */

const ALGORITHMS = ID_TOKEN_ALGORITHMS;
type Alg = IdTokenAlgorithm;

const ISSUER = "https://issuer.example";
const AUDIENCE = "dashboard";
/** The tokens' clock (seconds), fixed: the claim edges are exact. */
const T = 1_800_000_000;
const NOW = new Date(T * 1000);
const SKEW = ID_TOKEN_CLOCK_SKEW_SECONDS;
const invalid = { ok: false, reason: "invalid_id_token" };
const expired = { ok: false, reason: "expired_id_token" };

type Answer = (res: ServerResponse) => void;
let server: PathRoutedServer;

beforeAll(async () => {
  server = await startPathRoutedServer();
});

afterAll(() => server.close());

let counter = 0;
/** A key set URL of its own, answered by `answer`; `requests()` counts what reached it. */
function keySetAt(answer: Answer) {
  const name = `keys-${++counter}`;
  server.handle(name, (_request, res) => answer(res));
  return { url: `${server.origin}/${name}/jwks`, requests: () => server.requests(name).length };
}
const serving = (keys: () => unknown[]) => keySetAt((res) => json(res, 200, { keys: keys() }));

const b64 = (value: string | Uint8Array) => Buffer.from(value).toString("base64url");
const part = (value: unknown) => b64(JSON.stringify(value));

/** A token signed with WebCrypto directly: for what `jose` refuses to sign. */
async function handSigned(
  header: Record<string, unknown>,
  payload: unknown,
  key: CryptoKey,
  params: SubtleCryptoSignAlgorithm,
): Promise<string> {
  const input = `${part(header)}.${payload instanceof Uint8Array ? b64(payload) : part(payload)}`;
  const signature = await crypto.subtle.sign(params, key, new TextEncoder().encode(input));
  return `${input}.${b64(new Uint8Array(signature))}`;
}

const claims = (patch: Record<string, unknown> = {}) => {
  const all: Record<string, unknown> = { iss: ISSUER, aud: AUDIENCE, sub: "person-1", iat: T, exp: T + 300 };
  for (const [name, value] of Object.entries(patch)) {
    if (value === undefined) delete all[name];
    else all[name] = value;
  }
  return all;
};

const pairs = {} as Record<Alg, CryptoKeyPair>;
const published: Record<string, unknown>[] = [];
let mainUrl = "";

function check(token: string, extra: Partial<IdTokenExpectations> = {}, url = mainUrl) {
  return verifyIdToken(token, {
    issuer: ISSUER,
    audience: AUDIENCE,
    keys: remoteKeySet(url),
    now: NOW,
    ...extra,
  });
}

function joseToken(alg: Alg, payload = claims(), header: Record<string, unknown> = { kid: alg }) {
  return new SignJWT(payload).setProtectedHeader({ alg, ...header }).sign(pairs[alg].privateKey);
}

beforeAll(async () => {
  for (const alg of ALGORITHMS) {
    pairs[alg] = (await generateKeyPair(alg)) as CryptoKeyPair;
    published.push({ ...(await exportJWK(pairs[alg].publicKey)), kid: alg, alg, use: "sig" });
  }
  mainUrl = serving(() => published).url;
}, 60_000);

describe("every algorithm jose signs with", () => {
  it.each(ALGORITHMS)("%s: accepted, with the claims read", async (alg) => {
    const token = await joseToken(alg, claims({ email: " a@b.example ", email_verified: "true" }));
    expect(await check(token)).toEqual({
      ok: true,
      claims: { subject: "person-1", email: "a@b.example", emailVerified: true },
    });
    // And within the announced algorithms.
    expect((await check(token, { algorithms: ["ES256", alg] })).ok).toBe(true);
  });

  it.each(ALGORITHMS)("%s: refused outside the announced algorithms", async (alg) => {
    const others = ALGORITHMS.filter((a) => a !== alg);
    expect(await check(await joseToken(alg), { algorithms: others })).toEqual(invalid);
  });

  it.each(ALGORITHMS)("%s: a tampered payload or signature is refused", async (alg) => {
    const [header, payload, signature] = (await joseToken(alg)).split(".") as [string, string, string];
    const forged = part({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), sub: "person-2" });
    expect(await check(`${header}.${forged}.${signature}`)).toEqual(invalid);
    const bytes = Buffer.from(signature, "base64url");
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    expect(await check(`${header}.${payload}.${b64(bytes)}`)).toEqual(invalid);
  });

  it("one fetch of the key set serves them all", async () => {
    const set = serving(() => published);
    for (const alg of ALGORITHMS) expect((await check(await joseToken(alg), {}, set.url)).ok).toBe(true);
    expect(set.requests()).toBe(1);
  });

  it.each(ALGORITHMS)("%s: refused when signed by the key of another kid", async (alg) => {
    const other = alg === "RS256" ? "RS384" : "RS256";
    // The other key's kid, this algorithm: either the key does not fit the alg or the signature fails.
    expect(await check(await joseToken(alg, claims(), { kid: other }))).toEqual(invalid);
  });
});

describe("the token's header", () => {
  const rs256 = { name: "RSASSA-PKCS1-v1_5" };

  it.each([
    ["alg none, no signature", async () => `${part({ alg: "none" })}.${part(claims())}.`, undefined],
    ["alg none, even when announced", async () => `${part({ alg: "none" })}.${part(claims())}.`, ["none"]],
    [
      "alg none over a real key's signature",
      () => handSigned({ alg: "none", kid: "RS256" }, claims(), pairs.RS256.privateKey, rs256),
      undefined,
    ],
    [
      "HS256 (a key set holds no secrets)",
      () => new SignJWT(claims()).setProtectedHeader({ alg: "HS256" }).sign(new Uint8Array(32).fill(7)),
      undefined,
    ],
    [
      "a crit header (we understand no extension)",
      () =>
        handSigned(
          { alg: "RS256", kid: "RS256", crit: ["urn:example:x"], "urn:example:x": 1 },
          claims(),
          pairs.RS256.privateKey,
          rs256,
        ),
      undefined,
    ],
    ["an unknown kid", () => joseToken("RS256", claims(), { kid: "retired" }), undefined],
    [
      "a kid that is not a string",
      () => handSigned({ alg: "RS256", kid: 1 }, claims(), pairs.RS256.privateKey, rs256),
      undefined,
    ],
    [
      "an ES256 token naming the EdDSA key (key type)",
      () => handSigned({ alg: "ES256", kid: "EdDSA" }, claims(), pairs.EdDSA.privateKey, { name: "Ed25519" }),
      undefined,
    ],
    [
      "an unknown alg",
      () => handSigned({ alg: "RS1", kid: "RS256" }, claims(), pairs.RS256.privateKey, rs256),
      undefined,
    ],
  ] as const)("refuses %s", async (_case, token, algorithms) => {
    const extra = algorithms ? { algorithms: [...algorithms] } : {};
    expect(await check(await token(), extra)).toEqual(invalid);
  });

  it("accepts the hand-made token when it has no crit (the signer is sound)", async () => {
    const token = await handSigned({ alg: "RS256", kid: "RS256" }, claims(), pairs.RS256.privateKey, rs256);
    expect((await check(token)).ok).toBe(true);
  });
});

describe("which of the issuer's keys may verify", () => {
  const keys: Record<string, unknown>[] = [];
  let loose = { url: "", requests: () => 0 };
  const signers = {} as Record<string, (payload: unknown) => Promise<string>>;

  beforeAll(async () => {
    const jwk = async (key: CryptoKey) => ({ ...(await exportJWK(key)) }) as Record<string, unknown>;
    const rsa = pairs.RS256;
    const pss = pairs.PS256;
    const p256 = pairs.ES256;
    const weak = (await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: 1024,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: "SHA-256",
      },
      true,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const leaked = (await generateKeyPair("RS256", { extractable: true })) as CryptoKeyPair;
    keys.push(
      { ...(await jwk(rsa.publicKey)), kid: "enc", use: "enc" },
      { ...(await jwk(rsa.publicKey)), kid: "sig", use: "sig" },
      { ...(await jwk(rsa.publicKey)), kid: "ops-encrypt", key_ops: ["encrypt"] },
      { ...(await jwk(rsa.publicKey)), kid: "ops-verify", key_ops: ["verify"] },
      { ...(await jwk(pss.publicKey)), kid: "pss-labelled-rs256", alg: "RS256" },
      { ...(await jwk(pss.publicKey)), kid: "pss", alg: "PS256" },
      { ...(await jwk(p256.publicKey)), kid: "p256" },
      { ...(await jwk(weak.publicKey)), kid: "rsa-1024" },
      { ...(await jwk(leaked.privateKey)), kid: "private" },
    );
    loose = serving(() => keys);
    const rs = { name: "RSASSA-PKCS1-v1_5" };
    const sign = (header: Record<string, unknown>, key: CryptoKey, params: SubtleCryptoSignAlgorithm) => {
      return (payload: unknown) => handSigned(header, payload, key, params);
    };
    Object.assign(signers, {
      enc: sign({ alg: "RS256", kid: "enc" }, rsa.privateKey, rs),
      sig: sign({ alg: "RS256", kid: "sig" }, rsa.privateKey, rs),
      "ops-encrypt": sign({ alg: "RS256", kid: "ops-encrypt" }, rsa.privateKey, rs),
      "ops-verify": sign({ alg: "RS256", kid: "ops-verify" }, rsa.privateKey, rs),
      "pss-labelled-rs256": sign({ alg: "PS256", kid: "pss-labelled-rs256" }, pss.privateKey, {
        name: "RSA-PSS",
        saltLength: 32,
      }),
      pss: sign({ alg: "PS256", kid: "pss" }, pss.privateKey, { name: "RSA-PSS", saltLength: 32 }),
      "p256-es256": sign({ alg: "ES256", kid: "p256" }, p256.privateKey, { name: "ECDSA", hash: "SHA-256" }),
      "p256-es384": sign({ alg: "ES384", kid: "p256" }, p256.privateKey, { name: "ECDSA", hash: "SHA-384" }),
      "rsa-1024": sign({ alg: "RS256", kid: "rsa-1024" }, weak.privateKey, rs),
      private: sign({ alg: "RS256", kid: "private" }, leaked.privateKey, rs),
    });
  });

  it.each([
    ["use sig", "sig", true],
    ["use enc", "enc", false],
    ["key_ops with verify", "ops-verify", true],
    ["key_ops without verify", "ops-encrypt", false],
    ["its alg the token's", "pss", true],
    ["its alg another (an RSA-PSS key labelled RS256, PS256 token)", "pss-labelled-rs256", false],
    ["EC P-256 without alg, ES256 token", "p256-es256", true],
    ["EC P-256, ES384 token (ES384 needs P-384)", "p256-es384", false],
    ["an RSA key of 1024 bits", "rsa-1024", false],
    ["a private key published in the set", "private", false],
  ])("a key with %s", async (_case, signer, accepted) => {
    const verdict = await check(await signers[signer]!(claims()), {}, loose.url);
    expect(verdict).toEqual(accepted ? expect.objectContaining({ ok: true }) : invalid);
  });

  // The one place this differs from jose, which refused a token without kid when several keys fit.
  it("a token without kid is checked with every key that fits its alg", async () => {
    const first = (await generateKeyPair("RS256")) as CryptoKeyPair;
    const second = (await generateKeyPair("RS256")) as CryptoKeyPair;
    const twoKeys = [await exportJWK(first.publicKey), await exportJWK(second.publicKey)];
    const keySet = serving(() => twoKeys);
    const token = await new SignJWT(claims()).setProtectedHeader({ alg: "RS256" }).sign(second.privateKey);
    expect((await check(token, {}, keySet.url)).ok).toBe(true);
    const stranger = (await generateKeyPair("RS256")) as CryptoKeyPair;
    const strangers = await new SignJWT(claims())
      .setProtectedHeader({ alg: "RS256" })
      .sign(stranger.privateKey);
    expect(await check(strangers, {}, keySet.url)).toEqual(invalid);
  });
});

describe("the claims (jose's jwtVerify with the options the sign-in passed)", () => {
  const maxAge = ID_TOKEN_MAX_AGE_SECONDS;

  it.each([
    ["all as expected", {}, { ok: true }],
    ["another issuer", { iss: "https://elsewhere.example" }, invalid],
    ["no issuer", { iss: undefined }, invalid],
    ["another audience", { aud: "someone-else" }, invalid],
    ["no audience", { aud: undefined }, invalid],
    ["one audience in a list", { aud: [AUDIENCE] }, { ok: true }],
    ["a list without us", { aud: ["other"] }, invalid],
    ["several audiences, azp us", { aud: [AUDIENCE, "other"], azp: AUDIENCE }, { ok: true }],
    ["several audiences, no azp", { aud: [AUDIENCE, "other"] }, invalid],
    ["several audiences, azp another", { aud: [AUDIENCE, "other"], azp: "other" }, invalid],
    ["no sub", { sub: undefined }, invalid],
    ["a sub that is not a string", { sub: 42 }, invalid],
    ["no iat", { iat: undefined }, invalid],
    ["no exp", { exp: undefined }, invalid],
    ["an exp that is not a number", { exp: String(T + 300) }, invalid],
    ["exp just within the skew", { exp: T - SKEW + 1 }, { ok: true }],
    ["exp at the skew's edge", { exp: T - SKEW }, expired],
    ["exp an hour ago", { exp: T - 3600, iat: T - 3900 }, expired],
    ["iat as old as allowed", { iat: T - maxAge - SKEW }, { ok: true }],
    ["iat a second older", { iat: T - maxAge - SKEW - 1 }, expired],
    ["iat in the future within the skew", { iat: T + SKEW }, { ok: true }],
    ["iat in the future beyond the skew", { iat: T + SKEW + 1 }, invalid],
    ["nbf within the skew", { nbf: T + SKEW }, { ok: true }],
    ["nbf in the future", { nbf: T + SKEW + 1 }, invalid],
    ["an nbf that is not a number", { nbf: "now" }, invalid],
    // jose checked nbf before exp: a token wrong both ways is invalid, not expired.
    ["nbf in the future and expired", { nbf: T + SKEW + 1, exp: T - 3600 }, invalid],
  ] as const)("%s", async (_case, patch, verdict) => {
    const result = await check(await joseToken("ES256", claims(patch)));
    expect(result).toEqual(verdict.ok ? expect.objectContaining(verdict) : verdict);
  });

  it("then the nonce, when the flow sent one", async () => {
    const token = await joseToken("ES256", claims({ nonce: "n-1" }));
    expect((await check(token, { nonce: "n-1" })).ok).toBe(true);
    expect(await check(token, { nonce: "n-2" })).toEqual({ ok: false, reason: "nonce_mismatch" });
    // A wrong signature is reported as such, not as the nonce.
    expect(await check(`${token.slice(0, -4)}AAAA`, { nonce: "n-2" })).toEqual(invalid);
  });
});

describe("malformed tokens", () => {
  const rs256 = { name: "RSASSA-PKCS1-v1_5" };
  const signed = (payload: unknown) =>
    handSigned({ alg: "RS256", kid: "RS256" }, payload, pairs.RS256.privateKey, rs256);

  it.each([
    ["empty", async () => ""],
    ["two parts", async () => (await signed(claims())).split(".").slice(0, 2).join(".")],
    ["four parts", async () => `${await signed(claims())}.`],
    ["a header that is not base64url", async () => `!${(await signed(claims())).slice(1)}`],
    [
      "a signature in base64, not base64url",
      async () => {
        const [header, payload, signature] = (await signed(claims())).split(".") as [string, string, string];
        return `${header}.${payload}.${Buffer.from(signature, "base64url").toString("base64")}`;
      },
    ],
    [
      "padding",
      async () =>
        `${part({ alg: "RS256", kid: "RS256" })}==.${(await signed(claims())).split(".").slice(1).join(".")}`,
    ],
    [
      "a header that is not JSON",
      async () => `${b64("alg=RS256")}.${(await signed(claims())).split(".").slice(1).join(".")}`,
    ],
    ["a header that is a JSON array", async () => `${part(["RS256"])}.${part(claims())}.AAAA`],
    ["a header without alg", async () => `${part({ kid: "RS256" })}.${part(claims())}.AAAA`],
    ["an alg that is not a string", async () => `${part({ alg: 256, kid: "RS256" })}.${part(claims())}.AAAA`],
    ["a payload that is not JSON", () => signed(new TextEncoder().encode("sub=person-1"))],
    ["a payload that is a JSON array", () => signed([claims()])],
    ["a payload that is a JSON string", () => signed("person-1")],
    ["a payload that is not UTF-8", () => signed(new Uint8Array([0x7b, 0xff, 0x7d]))],
  ])("refuses %s", async (_case, token) => {
    expect(await check(await token())).toEqual(invalid);
  });
});

describe("the issuer's key set", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  async function keyPair(kid: string) {
    const pair = (await generateKeyPair("ES256")) as CryptoKeyPair;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid, alg: "ES256" };
    // Tokens issued "now" by the (possibly faked) clock.
    const token = async () => {
      const iat = Math.floor(Date.now() / 1000);
      return new SignJWT(claims({ iat, exp: iat + 300 }))
        .setProtectedHeader({ alg: "ES256", kid })
        .sign(pair.privateKey);
    };
    return { jwk, token };
  }
  const checkNow = async (token: string, url: string) =>
    (
      await verifyIdToken(token, {
        issuer: ISSUER,
        audience: AUDIENCE,
        keys: remoteKeySet(url),
        now: new Date(),
      })
    ).ok;

  it("is refetched for a new kid (rotation) at most once per cooldown, and once it is 10 minutes old", async () => {
    // Only Date is faked: the server, fetch and its timeout run on real timers.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2030-01-01T00:00:00Z"));
    const [a, b, c] = await Promise.all([keyPair("a"), keyPair("b"), keyPair("c")]);
    let keys = [a.jwk];
    const set = serving(() => keys);
    const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);

    expect(await checkNow(await a.token(), set.url)).toBe(true);
    expect(set.requests()).toBe(1);
    // The issuer rotates; a token with the new kid inside the cooldown is refused without asking again.
    keys = [a.jwk, b.jwk];
    expect(await checkNow(await b.token(), set.url)).toBe(false);
    advance(KEY_SET_COOLDOWN_MS - 1_000);
    expect(await checkNow(await b.token(), set.url)).toBe(false);
    expect(set.requests()).toBe(1);
    // Once the cooldown allows, the new kid makes it fetch the set again.
    advance(1_000);
    expect(await checkNow(await b.token(), set.url)).toBe(true);
    expect(await checkNow(await a.token(), set.url)).toBe(true);
    expect(set.requests()).toBe(2);
    // A kid the issuer never published: one fetch per cooldown, however many tokens carry it.
    expect(await checkNow(await c.token(), set.url)).toBe(false);
    expect(set.requests()).toBe(2);
    advance(KEY_SET_COOLDOWN_MS);
    expect(await checkNow(await c.token(), set.url)).toBe(false);
    expect(await checkNow(await c.token(), set.url)).toBe(false);
    expect(set.requests()).toBe(3);
    // A known kid never refetches, until the set is 10 minutes old.
    advance(KEY_SET_MAX_AGE_MS - 1_000);
    expect(await checkNow(await a.token(), set.url)).toBe(true);
    expect(set.requests()).toBe(3);
    advance(1_000);
    expect(await checkNow(await a.token(), set.url)).toBe(true);
    expect(set.requests()).toBe(4);
  });

  it("a failed fetch is not kept: the next token asks again", async () => {
    const a = await keyPair("a");
    let up = false;
    const set = keySetAt((res) => (up ? json(res, 200, { keys: [a.jwk] }) : json(res, 503, {})));
    expect(await checkNow(await a.token(), set.url)).toBe(false);
    up = true;
    expect(await checkNow(await a.token(), set.url)).toBe(true);
    expect(await checkNow(await a.token(), set.url)).toBe(true);
    expect(set.requests()).toBe(2);
  });

  it.each([
    ["not JSON", (res: ServerResponse) => void res.writeHead(200).end("<html>")],
    ["not a key set", (res: ServerResponse) => json(res, 200, { keys: "a" })],
    ["keys that are not objects", (res: ServerResponse) => json(res, 200, { keys: ["a"] })],
    ["a redirect (not followed)", (res: ServerResponse) => void res.writeHead(302, { Location: "/" }).end()],
  ])("refuses every token when the set answers %s", async (_case, answer) => {
    const a = await keyPair("a");
    const set = keySetAt(answer);
    expect(await checkNow(await a.token(), set.url)).toBe(false);
    expect(set.requests()).toBe(1);
  });

  it("gives up on a key set that does not answer within 5 s", async () => {
    const a = await keyPair("a");
    const set = keySetAt(() => {});
    const started = Date.now();
    expect(await checkNow(await a.token(), set.url)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    expect(Date.now() - started).toBeLessThan(9_000);
  }, 15_000);
});
