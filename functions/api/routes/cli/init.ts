import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { requestCredential } from "../../../../lib/auth/request-credential.ts";
import { type InitRefusal, initProgram } from "../../../../lib/cli/init-program.ts";
import { initTokenMessages, loginTokenError } from "../../../../lib/cli/login-token-messages.ts";
import { type ApiError, platformError } from "../../../../lib/errors/api-error.ts";
import {
  okResponse,
  payloadTooLargeResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { cliErrorPolicy } from "../../../../lib/http/cli-error-policy.ts";
import { loginTokenBeforeBodyRefusal } from "../../../../lib/http/login-token-before-body-refusal.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { workspaceRefusalMessages } from "../../../../lib/programs/create-program.ts";
import { newProgramFields } from "../../../../lib/programs/new-program-fields.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";

// The rules (and their exact messages) are judged by the program rules, so the schema accepts any shape of
// field; a JSON body that is not an object (`null`, `[]`) holds none of them: the missing-fields message.
const InitRequestSchema = z
  .object(
    {
      ...newProgramFields,
      advertiser_id: z.unknown().optional().openapi({ type: "integer", description: "Best left out" }),
    },
    { error: "Missing required fields: name, domain, commission_type, commission_rate" },
  )
  .openapi("CliInitRequest");

const InitResponseSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      program: z.object({
        id: z.number().int(),
        workspace_id: z.number().int(),
        name: z.string(),
        domain: z.string(),
        commission_type: z.string(),
        commission_rate: z.number(),
        duration_months: z.number().int(),
        cookie_duration: z.number().int(),
      }),
      api_key: z.string().openapi({ description: "The live key, shown this once" }),
      test_api_key: z.string().openapi({ description: "The test key, shown this once" }),
    }),
  })
  .openapi("CliInitResponse");

export const initRoute = createRoute({
  method: "post",
  path: "/api/v1/cli/init",
  tags: ["Command line"],
  summary: "Create a program in the logged-in person's workspace",
  description:
    "Bearer login token. Creates the program with a live and a test API key, shown in this answer only. " +
    "Rate limit 60 per minute per token. On a 500, list the programs before retrying.",
  security: [{ bearerAuth: [] }],
  request: { body: { required: true, content: { "application/json": { schema: InitRequestSchema } } } },
  responses: {
    200: okResponse("The program and its keys", InitResponseSchema),
    400: platformErrorResponse("A field breaks a rule of the init table"),
    401: platformErrorResponse(
      "Authentication required; Invalid or expired token; User not found (each with how to log in)",
    ),
    403: platformErrorResponse(
      "No advertiser found for this account; advertiser_id does not match the authenticated account; a " +
        "suspended account (`details.code` `ACCOUNT_BLOCKED`)",
    ),
    413: payloadTooLargeResponse,
    429: rateLimitedResponse,
    500: platformErrorResponse("Failed to create program (request_id: <id>)"),
  },
});

function refusalError(refusal: InitRefusal): ApiError {
  if (refusal.kind === "token") return loginTokenError(initTokenMessages, refusal.reason);
  if (refusal.kind === "field") return platformError(400, refusal.message);
  return platformError(403, workspaceRefusalMessages[refusal.reason]);
}

export function registerInit(app: OpenAPIHono<AppEnv>): void {
  app.use(
    initRoute.path,
    cliErrorPolicy("Failed to create program"),
    // The limiter first, so a 413 carries the X-RateLimit-* headers like every answer of the route.
    rateLimit(rateLimits.cli),
    limitBody(),
    loginTokenBeforeBodyRefusal(initTokenMessages),
  );
  app.openapi(initRoute, async (c) => {
    // Parsed and hashed once per request (the rate limiter already did): read from the context.
    const { header, keyHash } = await requestCredential(c);
    if (header.kind !== "token" || keyHash === null) throw loginTokenError(initTokenMessages, "missing");
    const { db, clock } = c.get("deps");
    const tokenHash = keyHash;
    const result = await initProgram(db, clock.now(), { header, tokenHash, body: c.req.valid("json") });
    // The token authenticated unless the token itself was refused: the limiter then knows it for a real one.
    if (result.outcome !== "refused" || result.refusal.kind !== "token")
      c.set("authenticatedKeyHash", tokenHash);
    if (result.outcome === "refused") throw refusalError(result.refusal);
    c.get("log").info("cli program created", { program_id: result.programId });
    const f = result.fields;
    return c.json(
      {
        success: true as const,
        data: {
          program: {
            id: result.programId,
            workspace_id: result.workspaceId,
            name: f.name,
            domain: f.domain,
            commission_type: f.commissionType,
            commission_rate: Number(f.commissionRate),
            duration_months: f.durationMonths,
            cookie_duration: f.attributionWindowDays,
          },
          api_key: result.apiKey,
          test_api_key: result.testApiKey,
        },
      },
      200,
    );
  });
}
