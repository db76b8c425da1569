import type { KnownKeys } from "./known-keys.ts";
import type { RateLimiter, RateLimitPolicy, RateLimitResult } from "./types.ts";

/**
 * How many times a policy's limit one address may send, per window, in tokens that did not authenticate.
 * Wide enough that a client's mistakes (a stale key retried) do not reach it (once it is reached, a real key's
 * first request in an isolate from that address is refused too, being unknown there), narrow enough that random
 * tokens cannot each buy a fresh allowance without end.
 */
export const unknownTokensPerAddressFactor = 10;

const unknownTokenPolicy = (policy: RateLimitPolicy): RateLimitPolicy => ({
  ...policy,
  limit: policy.limit * unknownTokensPerAddressFactor,
});

/** The bucket of one address's tokens that did not authenticate. */
const unknownTokensOf = (ip: string) => `unknown-token:${ip}`;

/**
 * Counts one request before it runs and answers the bucket its headers show (and, when refused, the
 * refusal's). Spec section 8: keyed routes count per Bearer token, falling back to IP when none is sent.
 *
 * - No token: the caller's IP bucket.
 * - A token: its own bucket, which its headers show (the spec's "limit of the bucket" is the token's). One
 *   wrong token sent from many addresses is limited as one token; a real key gets exactly its limit.
 * - A token this isolate has not seen authenticate is refused, before it is looked up, when its address has
 *   sent ten times the policy's limit of tokens that did not authenticate this window (`settleToken` counts
 *   them, after the request): random tokens cannot each buy a fresh allowance without end, and real keys,
 *   however many one address sends for, never use that bucket up.
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
    const byAddress = await limiter.peek(unknownTokenPolicy(policy), unknownTokensOf(ip));
    if (!byAddress.allowed) return byAddress;
  }
  return limiter.check(policy, `key:${tokenHash.slice(0, 32)}`);
}

/**
 * After a request with a token ran (not a refused one): a token that authenticated is remembered as real in
 * this isolate; one that did not, and is not known, counts in its address's bucket of unknown tokens.
 */
export async function settleToken(
  limiter: RateLimiter,
  policy: RateLimitPolicy,
  tokenHash: string,
  ip: string,
  knownTokens: KnownKeys,
  authenticated: boolean,
): Promise<void> {
  if (authenticated) knownTokens.remember(tokenHash);
  else if (!knownTokens.has(tokenHash)) await limiter.check(unknownTokenPolicy(policy), unknownTokensOf(ip));
}
