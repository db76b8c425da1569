import type { IdentityConfig } from "../config/env.ts";
import type { Database } from "../db/client.ts";
import type { PersonRefusal } from "./identity-errors.ts";
import { issuerKeys } from "./issuer-keys.ts";
import { consumeOauthState, newState, saveOauthState } from "./oauth-state-store.ts";
import { oidc, oidcConfiguration } from "./oidc-client.ts";
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
  const configuration = await oidcConfiguration(identity);
  const state = newState();
  const nonce = oidc.randomNonce();
  const codeVerifier = oidc.randomPKCECodeVerifier();
  await saveOauthState(db, state, { purpose: "sign_in", nonce, codeVerifier }, now);
  const url = oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: redirectUri,
    scope: "openid email",
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
  });
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
  const state = callbackUrl.searchParams.get("state");
  if (!state || !cookieState || state !== cookieState) return { ok: false, reason: "state_invalid" };
  const flow = await consumeOauthState(db, state, "sign_in", now);
  if (!flow?.nonce || !flow.codeVerifier) return { ok: false, reason: "state_invalid" };
  if (callbackUrl.searchParams.has("error")) return { ok: false, reason: "provider_refused" };

  const configuration = await oidcConfiguration(identity);
  let idToken: string | undefined;
  try {
    const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: flow.codeVerifier,
      expectedState: state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    idToken = tokens.id_token;
  } catch {
    return { ok: false, reason: "provider_refused" };
  }
  if (!idToken) return { ok: false, reason: "id_token_invalid" };
  // openid-client checked the claims; the signature is checked here too, against the issuer's keys.
  const verdict = await verifyIdToken(idToken, {
    issuer: identity.issuer,
    audience: identity.clientId,
    keys: await issuerKeys(identity),
    nonce: flow.nonce,
    now,
  });
  if (!verdict.ok) return { ok: false, reason: "id_token_invalid" };
  const person = await resolvePerson(db, verdict.claims);
  return person.ok ? { ok: true, userId: person.userId } : person;
}
