import type { IdentityConfig } from "../config/env.ts";

/** What the sign-in and the ID token check use from the issuer's discovery document. */
export interface IssuerMetadata {
  issuer: string;
  authorizationEndpoint: URL;
  tokenEndpoint: URL;
  jwksUri: URL;
  /** RFC 9207: the provider puts `iss` in every authorization response, so one without it is refused. */
  issParameterSupported: boolean;
  /** The algorithms the provider may sign ID tokens with (RS256 when it does not say; never "none"). */
  idTokenAlgorithms: string[];
}

/** A provider that does not answer in this time fails the request (the sign-in routes answer 500). */
export const DISCOVERY_TIMEOUT_MS = 10_000;

/** Plain http only for the local provider: a loopback issuer whose endpoints are on loopback too. */
const LOOPBACK_HTTP = /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?(\/|$)/;

function allowedUrl(value: unknown, issuerOnLoopback: boolean, name: string): URL {
  let url: URL | null = null;
  try {
    url = typeof value === "string" ? new URL(value) : null;
  } catch {}
  if (!url) throw new Error(`OpenID discovery: ${name} is missing or not a URL`);
  if (url.protocol === "https:") return url;
  if (issuerOnLoopback && LOOPBACK_HTTP.test(url.href)) return url;
  throw new Error(`OpenID discovery: ${name} must be https`);
}

async function discover(issuer: string): Promise<IssuerMetadata> {
  const issuerOnLoopback = LOOPBACK_HTTP.test(issuer);
  allowedUrl(issuer, issuerOnLoopback, "the issuer");
  const url = `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
  const response = await fetch(url, {
    headers: { Accept: "application/json" },
    redirect: "manual",
    signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
  });
  if (response.status !== 200) throw new Error(`OpenID discovery answered ${response.status}`);
  const document = (await response.json()) as Record<string, unknown> | null;
  // Exactly the configured issuer: the ID tokens' `iss` is compared with it, and a provider serving another
  // issuer's document (mix-up) is refused here.
  if (typeof document !== "object" || document === null || document.issuer !== issuer) {
    throw new Error("OpenID discovery document does not match the configured issuer");
  }
  const algorithms = document.id_token_signing_alg_values_supported;
  const idTokenAlgorithms = Array.isArray(algorithms)
    ? algorithms.filter((alg): alg is string => typeof alg === "string" && alg !== "none")
    : ["RS256"];
  return {
    issuer,
    authorizationEndpoint: allowedUrl(
      document.authorization_endpoint,
      issuerOnLoopback,
      "authorization_endpoint",
    ),
    tokenEndpoint: allowedUrl(document.token_endpoint, issuerOnLoopback, "token_endpoint"),
    jwksUri: allowedUrl(document.jwks_uri, issuerOnLoopback, "jwks_uri"),
    issParameterSupported: document.authorization_response_iss_parameter_supported === true,
    idTokenAlgorithms,
  };
}

// Per isolate: the document rarely changes. A failure is not cached: the next request tries again.
const discovered = new Map<string, Promise<IssuerMetadata>>();

/** The issuer's discovery document (`/.well-known/openid-configuration`), checked; shared by sign-in and keys. */
export function issuerMetadata(identity: Pick<IdentityConfig, "issuer">): Promise<IssuerMetadata> {
  let metadata = discovered.get(identity.issuer);
  if (!metadata) {
    metadata = discover(identity.issuer);
    discovered.set(identity.issuer, metadata);
    metadata.catch(() => discovered.delete(identity.issuer));
  }
  return metadata;
}
