import type { JWTVerifyGetKey } from "jose";
import type { IdentityConfig } from "../config/env.ts";
import { issuerMetadata } from "./issuer-discovery.ts";
import { remoteKeySet } from "./verify-id-token.ts";

/** The issuer's signing keys, from the key set its discovery document names (jose refetches on rotation). */
export async function issuerKeys(identity: IdentityConfig): Promise<JWTVerifyGetKey> {
  return remoteKeySet((await issuerMetadata(identity)).jwksUri.href);
}
