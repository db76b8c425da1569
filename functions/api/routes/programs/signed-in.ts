import { z } from "@hono/zod-openapi";
import {
  okResponse,
  payloadTooLargeResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { rateLimitByMethod } from "../../../../lib/http/rate-limit-by-method.ts";
import { requireSession } from "../../../../lib/http/require-session.ts";
import type { RateLimitPolicy } from "../../../../lib/ratelimit/types.ts";

/**
 * The program management routes (settings, keys, partners, links, programs): a dashboard sign-in token
 * (Bearer or the page's cookie), never a program API key; a rate limit per token, chosen by method.
 */
export function signedIn(policies: Partial<Record<string, RateLimitPolicy>> & { default: RateLimitPolicy }) {
  return [errorPolicy("Internal server error"), rateLimitByMethod(policies), requireSession] as const;
}

export const ProgramIdParam = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "42", description: "Program id" }),
});

export const signedInSecurity: Record<string, string[]>[] = [{ bearerAuth: [] }, { sessionCookie: [] }];

/** The refusals every signed-in program route shares. */
export const signedInErrors = {
  401: platformErrorResponse(
    "Sign-in required; an unknown, expired or revoked sign-in token; or a program API key instead of one",
  ),
  403: platformErrorResponse(
    "You do not have access to this program (another workspace's program, a program id that does not " +
      "exist, or no active membership: the same answer); a suspended account (`ACCOUNT_BLOCKED`); a " +
      "cookie-authenticated write from another origin",
  ),
  429: rateLimitedResponse,
  500: platformErrorResponse("Internal server error"),
};

export const bodyErrors = {
  400: platformErrorResponse("A field breaks its rule; the message names the field"),
  413: payloadTooLargeResponse,
};

export { okResponse };
