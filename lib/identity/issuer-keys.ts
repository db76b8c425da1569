import type { JWTVerifyGetKey } from "jose";
import type { IdentityConfig } from "../config/env.ts";
import { remoteKeySet } from "./verify-id-token.ts";

// Per isolate: the issuer's discovery document rarely changes; its keys are refetched by jose on rotation.
const jwksUris = new Map<string, Promise<string>>();

/** The issuer's discovery document (`/.well-known/openid-configuration`) names its key set. */
async function discoverJwksUri(issuer: string): Promise<string> {
  const url = `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`OpenID discovery answered ${response.status}`);
  const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  if (metadata.issuer !== issuer || typeof metadata.jwks_uri !== "string") {
    throw new Error("OpenID discovery document does not match the configured issuer");
  }
  return metadata.jwks_uri;
}

export async function issuerKeys(identity: IdentityConfig): Promise<JWTVerifyGetKey> {
  let uri = jwksUris.get(identity.issuer);
  if (!uri) {
    uri = discoverJwksUri(identity.issuer);
    jwksUris.set(identity.issuer, uri);
    // A failed discovery is retried by the next request rather than cached.
    uri.catch(() => jwksUris.delete(identity.issuer));
  }
  return remoteKeySet(await uri);
}
