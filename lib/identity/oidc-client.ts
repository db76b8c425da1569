import type { IdentityConfig } from "../config/env.ts";
import { base64Url } from "../ids.ts";
import type { IssuerMetadata } from "./issuer-discovery.ts";

/**
 * The dashboard sign-in's OpenID client: the authorization code flow with PKCE (S256), on fetch and WebCrypto.
 * Discovery is `issuer-discovery.ts`; the ID token is verified by `verify-id-token.ts`. The client
 * authenticates with `client_secret_basic` when a secret is configured, else as a public client (PKCE
 * protects the code either way).
 */

/** The token endpoint gets this long to answer; then the sign-in is refused as the provider's failure. */
export const TOKEN_REQUEST_TIMEOUT_MS = 10_000;

/** 32 random bytes, base64url: the PKCE verifier (RFC 7636: 43 characters) and the nonce. */
export function randomToken(): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/** RFC 7636 S256: base64url(SHA-256(ASCII(verifier))). */
export async function pkceChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64Url(new Uint8Array(digest));
}

export async function authorizationUrl(
  metadata: IssuerMetadata,
  identity: IdentityConfig,
  request: { redirectUri: string; state: string; nonce: string; codeVerifier: string },
): Promise<URL> {
  // Parameters the endpoint URL itself carries (some providers need one) are kept.
  const url = new URL(metadata.authorizationEndpoint);
  const parameters = {
    client_id: identity.clientId,
    redirect_uri: request.redirectUri,
    response_type: "code",
    scope: "openid email",
    state: request.state,
    nonce: request.nonce,
    code_challenge: await pkceChallenge(request.codeVerifier),
    code_challenge_method: "S256",
  };
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return url;
}

export type ProviderRefusal = { ok: false; reason: "provider_refused" | "id_token_invalid" };

/** A response parameter that appears twice is ambiguous; reading the first could let an attacker's win. */
export function singleParameter(parameters: URLSearchParams, name: string): string | undefined | null {
  const values = parameters.getAll(name);
  return values.length > 1 ? null : values[0];
}

/**
 * The authorization response (the callback's query), after its `state` was checked: the provider's error,
 * no code, an `iss` that is not our issuer (RFC 9207 mix-up defence: also when the provider promises `iss`
 * and it is missing), or the parameters of other flows (implicit, hybrid, JARM) refuse it.
 */
export function authorizationCode(
  metadata: IssuerMetadata,
  parameters: URLSearchParams,
): { ok: true; code: string } | ProviderRefusal {
  const refused = { ok: false, reason: "provider_refused" } as const;
  if (parameters.has("error")) return refused;
  for (const other of ["id_token", "token", "response"]) if (parameters.has(other)) return refused;
  const iss = singleParameter(parameters, "iss");
  if (iss === null || (iss === undefined && metadata.issParameterSupported)) return refused;
  if (iss !== undefined && iss !== metadata.issuer) return refused;
  const code = singleParameter(parameters, "code");
  if (!code) return refused;
  return { ok: true, code };
}

/** RFC 6749 2.3.1: the client id and secret are form-urlencoded before they are joined and base64-encoded. */
function formEncode(value: string): string {
  return new URLSearchParams([["", value]]).toString().slice(1);
}

export function basicCredentials(clientId: string, clientSecret: string): string {
  return `Basic ${btoa(`${formEncode(clientId)}:${formEncode(clientSecret)}`)}`;
}

/**
 * Exchanges the code at the token endpoint and returns the ID token (not yet verified). Any failure of the
 * provider (unreachable, slow, an error, a malformed answer, a token type other than Bearer, no ID token) is
 * `provider_refused`, as it was with the library this replaces.
 */
export async function exchangeCode(
  metadata: IssuerMetadata,
  identity: IdentityConfig,
  request: { code: string; redirectUri: string; codeVerifier: string },
  timeoutMs = TOKEN_REQUEST_TIMEOUT_MS,
): Promise<{ ok: true; idToken: string } | ProviderRefusal> {
  const refused = { ok: false, reason: "provider_refused" } as const;
  const body = new URLSearchParams({
    grant_type: "authorization_code",
    code: request.code,
    redirect_uri: request.redirectUri,
    code_verifier: request.codeVerifier,
  });
  const headers: Record<string, string> = {
    "Content-Type": "application/x-www-form-urlencoded",
    Accept: "application/json",
  };
  if (identity.clientSecret)
    headers.Authorization = basicCredentials(identity.clientId, identity.clientSecret);
  else body.set("client_id", identity.clientId);

  let tokens: unknown;
  try {
    const response = await fetch(metadata.tokenEndpoint, {
      method: "POST",
      headers,
      body: body.toString(),
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      return refused;
    }
    tokens = await response.json();
  } catch {
    return refused;
  }
  if (typeof tokens !== "object" || tokens === null) return refused;
  const { token_type: tokenType, id_token: idToken } = tokens as Record<string, unknown>;
  if (typeof tokenType !== "string" || tokenType.toLowerCase() !== "bearer") return refused;
  if (typeof idToken !== "string" || idToken === "") return refused;
  return { ok: true, idToken };
}
