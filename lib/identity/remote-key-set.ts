import { type JwsAlgorithm, jwsAlgorithm, MIN_RSA_BITS } from "./jws-algorithms.ts";

/**
 * The issuer's signing keys (the JWK Set at its `jwks_uri`), kept per isolate with the rules of `jose`'s
 * `createRemoteJWKSet`, which this replaces: fetched when first needed and again once 10 minutes old; fetched
 * again when a token names no key of the set (the issuer rotated its keys), but at most once per 30 s, so
 * tokens with made-up key ids cannot make us hammer the issuer. A failed fetch keeps nothing: the next token
 * tries again. The URL was checked by discovery (https, or loopback for the local provider).
 */
export interface KeySet {
  /** The set's keys that may have signed a token with this `alg` and `kid`, imported to verify `alg`. */
  keysFor(alg: string, kid: unknown): Promise<CryptoKey[]>;
}

export const KEY_SET_TIMEOUT_MS = 5_000;
export const KEY_SET_COOLDOWN_MS = 30_000;
export const KEY_SET_MAX_AGE_MS = 10 * 60_000;

export type Jwk = Record<string, unknown>;

const isJsonObject = (value: unknown): value is Jwk =>
  typeof value === "object" && value !== null && !Array.isArray(value);

async function fetchKeySet(url: string): Promise<Jwk[]> {
  const response = await fetch(url, {
    headers: { Accept: "application/json, application/jwk-set+json" },
    redirect: "manual",
    signal: AbortSignal.timeout(KEY_SET_TIMEOUT_MS),
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`The issuer's key set answered ${response.status}`);
  }
  const body: unknown = await response.json();
  const keys = isJsonObject(body) ? body.keys : undefined;
  if (!Array.isArray(keys) || !keys.every(isJsonObject))
    throw new Error("The issuer's key set is not a JWK Set");
  return keys;
}

/** The key selection `jose` made: by `kid` when the token names one, and only keys meant for this `alg`. */
function fits(jwk: Jwk, alg: string, algorithm: JwsAlgorithm, kid: unknown): boolean {
  const ops = jwk.key_ops;
  return (
    jwk.kty === algorithm.kty &&
    (algorithm.crv === undefined || jwk.crv === algorithm.crv) &&
    (kid === undefined || (typeof kid === "string" && jwk.kid === kid)) &&
    (jwk.alg === undefined || jwk.alg === alg) &&
    (jwk.use === undefined || jwk.use === "sig") &&
    (ops === undefined || (Array.isArray(ops) && ops.includes("verify")))
  );
}

/** The key for `alg`, or null when it cannot be one: malformed, a private key, or RSA under 2048 bits. */
async function importKey(jwk: Jwk, algorithm: JwsAlgorithm): Promise<CryptoKey | null> {
  // A set that publishes a private key is broken; `jose` refused such members too.
  if (jwk.d !== undefined) return null;
  // Only the public members: `alg`, `use` and `key_ops` were checked by `fits`, and WebCrypto would
  // read them again with its own names.
  const { kty, n, e, crv, x, y } = jwk;
  const publicJwk = kty === "RSA" ? { kty, n, e } : kty === "EC" ? { kty, crv, x, y } : { kty, crv, x };
  try {
    const key = await crypto.subtle.importKey("jwk", publicJwk as JsonWebKey, algorithm.importAs, false, [
      "verify",
    ]);
    const { modulusLength } = key.algorithm as Partial<CryptoKeyRsaKeyAlgorithm>;
    if (algorithm.kty === "RSA" && !(typeof modulusLength === "number" && modulusLength >= MIN_RSA_BITS))
      return null;
    return key;
  } catch {
    return null;
  }
}

/** A key set whose JWKs `load` gets (`remoteKeySet`: from the issuer; tests: their own keys). */
export function createKeySet(load: () => Promise<Jwk[]>): KeySet {
  let keys: Jwk[] | undefined;
  let fetchedAt = 0;
  // Importing a key costs more than a verification: each JWK's imported keys, per alg, while it is in the set.
  const imported = new WeakMap<Jwk, Map<string, CryptoKey | null>>();

  // Nothing pending is shared between calls: in workerd a fetch begun by one request cannot be relied on by
  // another (it may be cancelled when its request ends; jose shares none there either), so two calls that
  // need a fetch at once both fetch.
  async function reload(): Promise<Jwk[]> {
    const fetched = await load();
    keys = fetched;
    fetchedAt = Date.now();
    return fetched;
  }
  const fetchedWithin = (ms: number) => Date.now() < fetchedAt + ms;

  async function importFor(jwk: Jwk, alg: string, algorithm: JwsAlgorithm): Promise<CryptoKey | null> {
    const byAlg = imported.get(jwk) ?? new Map<string, CryptoKey | null>();
    imported.set(jwk, byAlg);
    if (!byAlg.has(alg)) byAlg.set(alg, await importKey(jwk, algorithm));
    return byAlg.get(alg) ?? null;
  }

  return {
    async keysFor(alg, kid) {
      const algorithm = jwsAlgorithm(alg);
      if (!algorithm) return [];
      const current = keys && fetchedWithin(KEY_SET_MAX_AGE_MS) ? keys : await reload();
      let candidates = current.filter((jwk) => fits(jwk, alg, algorithm, kid));
      if (candidates.length === 0 && !fetchedWithin(KEY_SET_COOLDOWN_MS))
        candidates = (await reload()).filter((jwk) => fits(jwk, alg, algorithm, kid));
      const usable: CryptoKey[] = [];
      for (const jwk of candidates) {
        const key = await importFor(jwk, alg, algorithm);
        if (key) usable.push(key);
      }
      return usable;
    },
  };
}

const keySets = new Map<string, KeySet>();

/** The key set at `jwksUri`, one per isolate. */
export function remoteKeySet(jwksUri: string): KeySet {
  let keySet = keySets.get(jwksUri);
  if (!keySet) {
    keySet = createKeySet(() => fetchKeySet(jwksUri));
    keySets.set(jwksUri, keySet);
  }
  return keySet;
}
