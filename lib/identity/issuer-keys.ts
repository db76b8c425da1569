import type { IdentityConfig } from "../config/env.ts";
import { issuerMetadata } from "./issuer-discovery.ts";
import { type KeySet, remoteKeySet } from "./remote-key-set.ts";

/** The issuer's signing keys, from the key set its discovery document names (refetched on rotation). */
export async function issuerKeys(identity: IdentityConfig): Promise<KeySet> {
  return remoteKeySet((await issuerMetadata(identity)).jwksUri.href);
}
