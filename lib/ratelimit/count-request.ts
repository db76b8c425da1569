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

export interface CountedRequest {
  /** The bucket the response's headers show; when refused, the refusal's. */
  shown: RateLimitResult;
  /** The count a token the isolate did not know took in its address's bucket, taken back if it authenticates. */
  unknownToken: RateLimitResult | null;
}

/**
 * Counts one request before it runs. Spec section 8: keyed routes count per Bearer token, falling back to IP
 * when none is sent.
 *
 * - No token: the caller's IP bucket.
 * - A token: its own bucket, which its headers show (the spec's "limit of the bucket" is the token's). One
 *   wrong token sent from many addresses is limited as one token; a real key gets exactly its limit.
 * - A token this isolate has not seen authenticate also counts, first, in its address's bucket of unknown
 *   tokens, ten times the policy's limit and apart from the keyless IP bucket: past it, the request is refused
 *   with that bucket's figures, before the token is looked up, so random tokens cannot each buy a fresh
 *   allowance without end, however many are sent at once. A token that authenticates takes its count back
 *   (`settleToken`), so real keys, however many one address sends for, never use that bucket up.
 *
 * Keys never reach Redis in clear: the bucket is the token's hash.
 */
export async function countRequest(
  limiter: RateLimiter,
  policy: RateLimitPolicy,
  tokenHash: string | null,
  ip: string,
  knownTokens: KnownKeys,
): Promise<CountedRequest> {
  if (!tokenHash) return { shown: await limiter.check(policy, `ip:${ip}`), unknownToken: null };
  let unknownToken: RateLimitResult | null = null;
  if (!knownTokens.has(tokenHash)) {
    unknownToken = await limiter.check(unknownTokenPolicy(policy), unknownTokensOf(ip));
    if (!unknownToken.allowed) return { shown: unknownToken, unknownToken: null };
  }
  return { shown: await limiter.check(policy, `key:${tokenHash.slice(0, 32)}`), unknownToken };
}

/**
 * After a request with a token ran (not a refused one): a token that authenticated is remembered as real in
 * this isolate, and the count it took in its address's bucket of unknown tokens is taken back.
 */
export async function settleToken(
  limiter: RateLimiter,
  policy: RateLimitPolicy,
  tokenHash: string,
  ip: string,
  knownTokens: KnownKeys,
  counted: CountedRequest,
  authenticated: boolean,
): Promise<void> {
  if (!authenticated) return;
  knownTokens.remember(tokenHash);
  if (counted.unknownToken) {
    await limiter.release(unknownTokenPolicy(policy), unknownTokensOf(ip), counted.unknownToken);
  }
}
