import * as oidc from "openid-client";
import type { IdentityConfig } from "../config/env.ts";

// Per isolate: discovery once per issuer; a failure is not cached.
const configurations = new Map<string, Promise<oidc.Configuration>>();

/**
 * The OpenID client of the dashboard sign-in (`openid-client`, which runs in workerd): discovery, the
 * authorization URL, the code exchange. The client authenticates with `client_secret_basic` when a secret
 * is configured, else as a public client (PKCE protects the code either way). Plain `http` issuers are
 * allowed only on loopback (the local provider).
 */
export function oidcConfiguration(identity: IdentityConfig): Promise<oidc.Configuration> {
  const key = `${identity.issuer}|${identity.clientId}`;
  let configuration = configurations.get(key);
  if (!configuration) {
    const loopbackHttp = /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?(\/|$)/.test(identity.issuer);
    configuration = oidc.discovery(
      new URL(identity.issuer),
      identity.clientId,
      undefined,
      identity.clientSecret ? oidc.ClientSecretBasic(identity.clientSecret) : oidc.None(),
      loopbackHttp ? { execute: [oidc.allowInsecureRequests] } : undefined,
    );
    configurations.set(key, configuration);
    configuration.catch(() => configurations.delete(key));
  }
  return configuration;
}

export { oidc };
