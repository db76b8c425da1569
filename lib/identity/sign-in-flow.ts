import type { IdentityConfig } from "../config/env.ts";
import type { Database } from "../db/client.ts";
import type { PersonRefusal } from "./identity-errors.ts";
import { issuerMetadata } from "./issuer-discovery.ts";
import { issuerKeys } from "./issuer-keys.ts";
import { consumeOauthState, newState, saveOauthState } from "./oauth-state-store.ts";
import {
  authorizationCode,
  authorizationUrl,
  exchangeCode,
  randomToken,
  singleParameter,
} from "./oidc-client.ts";
import { resolvePerson } from "./resolve-person.ts";
import { verifyIdToken } from "./verify-id-token.ts";

/**
 * Dashboard sign-in, start and finish (authorization code flow with state, nonce and PKCE S256). The state
 * is stored (hashed) with the nonce and the PKCE verifier, and also set in a cookie on the browser that
 * started, so a callback carrying someone else's state is refused (login CSRF).
 */
export async function startSignIn(
  db: Database,
  identity: IdentityConfig,
  redirectUri: string,
  now: Date,
): Promise<{ authorizationUrl: string; state: string }> {
  const metadata = await issuerMetadata(identity);
  const state = newState();
  const nonce = randomToken();
  const codeVerifier = randomToken();
  await saveOauthState(db, state, { purpose: "sign_in", nonce, codeVerifier }, now);
  const url = await authorizationUrl(metadata, identity, { redirectUri, state, nonce, codeVerifier });
  return { authorizationUrl: url.href, state };
}

export type FinishSignInResult =
  | { ok: true; userId: number }
  | { ok: false; reason: "state_invalid" | "provider_refused" | "id_token_invalid" | PersonRefusal };

export async function finishSignIn(
  db: Database,
  identity: IdentityConfig,
  callbackUrl: URL,
  cookieState: string | undefined,
  now: Date,
): Promise<FinishSignInResult> {
  // A repeated `state` is ambiguous (null): refused, as the library this client replaced did.
  const state = singleParameter(callbackUrl.searchParams, "state");
  if (!state || !cookieState || state !== cookieState) return { ok: false, reason: "state_invalid" };
  const flow = await consumeOauthState(db, state, "sign_in", now);
  if (!flow?.nonce || !flow.codeVerifier) return { ok: false, reason: "state_invalid" };
  if (callbackUrl.searchParams.has("error")) return { ok: false, reason: "provider_refused" };

  const metadata = await issuerMetadata(identity);
  const authorization = authorizationCode(metadata, callbackUrl.searchParams);
  if (!authorization.ok) return authorization;
  // The redirect URI the authorization request named: this callback's URL without its query.
  const redirectUri = `${callbackUrl.origin}${callbackUrl.pathname}`;
  const tokens = await exchangeCode(metadata, identity, {
    code: authorization.code,
    redirectUri,
    codeVerifier: flow.codeVerifier,
  });
  if (!tokens.ok) return tokens;
  const verdict = await verifyIdToken(tokens.idToken, {
    issuer: identity.issuer,
    audience: identity.clientId,
    keys: await issuerKeys(identity),
    nonce: flow.nonce,
    algorithms: metadata.idTokenAlgorithms,
    now,
  });
  if (!verdict.ok) return { ok: false, reason: "id_token_invalid" };
  const person = await resolvePerson(db, verdict.claims);
  return person.ok ? { ok: true, userId: person.userId } : person;
}
