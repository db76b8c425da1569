import type { Context } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import { sha256Hex } from "./api-keys.ts";
import { type BearerHeader, parseBearer } from "./bearer.ts";

/** The request's Authorization header, parsed, and the SHA-256 of its Bearer token (null without one). */
export interface RequestCredential {
  header: BearerHeader;
  keyHash: string | null;
}

/**
 * Parses and hashes the Bearer header once per request: the first caller (the rate limiter, then the
 * route's key lookup) stores it on the context and every later one reuses it.
 */
export async function requestCredential(c: Context<AppEnv>): Promise<RequestCredential> {
  const stored = c.get("credential");
  if (stored) return stored;
  const header = parseBearer(c.req.header("Authorization"));
  const credential = { header, keyHash: header.kind === "token" ? await sha256Hex(header.token) : null };
  c.set("credential", credential);
  return credential;
}
