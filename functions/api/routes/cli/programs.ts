import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { requestCredential } from "../../../../lib/auth/request-credential.ts";
import { listPrograms } from "../../../../lib/cli/list-programs.ts";
import { loginTokenError, programsTokenMessages } from "../../../../lib/cli/login-token-messages.ts";
import {
  okResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { cliErrorPolicy } from "../../../../lib/http/cli-error-policy.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";

const ProgramsResponseSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      programs: z.array(
        z.object({
          id: z.number().int(),
          name: z.string(),
          domain: z.string(),
          workspace_id: z.number().int(),
          commission_type: z.string(),
          commission_rate: z.number(),
          created_at: z.string(),
        }),
      ),
    }),
  })
  .openapi("CliProgramsResponse");

export const programsRoute = createRoute({
  method: "get",
  path: "/api/v1/cli/programs",
  tags: ["Command line"],
  summary: "The programs of the logged-in person's workspaces",
  description: "Bearer login token. Rate limit 60 per minute per token. API keys are never listed.",
  security: [{ bearerAuth: [] }],
  responses: {
    200: okResponse("The programs", ProgramsResponseSchema),
    401: platformErrorResponse("Missing Authorization header; Invalid or expired token; User not found"),
    403: platformErrorResponse("A suspended account (`details.code` `ACCOUNT_BLOCKED`)"),
    429: rateLimitedResponse,
    500: platformErrorResponse("Failed to list programs (request_id: <id>)"),
  },
});

export function registerPrograms(app: OpenAPIHono<AppEnv>): void {
  app.use(programsRoute.path, cliErrorPolicy("Failed to list programs"), rateLimit(rateLimits.cli));
  app.openapi(programsRoute, async (c) => {
    // Parsed and hashed once per request (the rate limiter already did): read from the context.
    const { header, keyHash } = await requestCredential(c);
    if (header.kind !== "token" || keyHash === null) throw loginTokenError(programsTokenMessages, "missing");
    const { db, clock } = c.get("deps");
    const tokenHash = keyHash;
    const result = await listPrograms(db, clock.now(), header, tokenHash);
    if (result.outcome === "refused") throw loginTokenError(programsTokenMessages, result.reason);
    c.set("authenticatedKeyHash", tokenHash);
    return c.json({ success: true as const, data: { programs: result.programs } }, 200);
  });
}
