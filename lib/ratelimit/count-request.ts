import type { KnownKeys } from "./known-keys.ts";
import type { RateLimiter, RateLimitPolicy, RateLimitResult } from "./types.ts";

/**
 * How many times a policy's limit one address may send, per window, in tokens this isolate does not know to
 * be real. Wide enough that what a limit's own tests or a busy office send does not reach it (a real key's
 * first request from that address is refused once it is reached), narrow enough that random tokens cannot
 * each buy a fresh allowance without end.
 */
export const unknownTokensPerAddressFactor = 10;

const unknownTokenPolicy = (policy: RateLimitPolicy): RateLimitPolicy => ({
  ...policy,
  limit: policy.limit * unknownTokensPerAddressFactor,
});

/**
 * Counts one request and answers the bucket its headers show (and, when refused, the refusal's). Spec
 * section 8: keyed routes count per Bearer token, falling back to IP when none is sent.
 *
 * - No token: the caller's IP bucket.
 * - A token: its own bucket, which its headers show (the spec's "limit of the bucket" is the token's). One
 *   wrong token sent from many addresses is limited as one token; a real key gets exactly its limit.
 * - A token this isolate has not seen authenticate counts first in its address's bucket of unknown tokens,
 *   apart from the keyless IP bucket and ten times the policy's limit: past it, the request is refused with
 *   that bucket's figures, before the token is looked up.
 *
 * Keys never reach Redis in clear: the bucket is the token's hash.
 */
export async function countRequest(
  limiter: RateLimiter,
  policy: RateLimitPolicy,
  tokenHash: string | null,
  ip: string,
  knownTokens: KnownKeys,
): Promise<RateLimitResult> {
  if (!tokenHash) return limiter.check(policy, `ip:${ip}`);
  if (!knownTokens.has(tokenHash)) {
    const byAddress = await limiter.check(unknownTokenPolicy(policy), `unknown-token:${ip}`);
    if (!byAddress.allowed) return byAddress;
  }
  return limiter.check(policy, `key:${tokenHash.slice(0, 32)}`);
}
