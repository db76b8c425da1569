import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { parseProgramId, programAccessRefused } from "../../../../lib/auth/require-program-membership.ts";
import { platformError } from "../../../../lib/errors/api-error.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { regenerateApiKey } from "../../../../lib/programs/regenerate-api-key.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import {
  bodyErrors,
  okResponse,
  ProgramIdParam,
  signedIn,
  signedInErrors,
  signedInSecurity,
} from "./signed-in.ts";

export const OWNER_ONLY_MESSAGE = "Only a workspace owner can regenerate API keys";

const RegenerateRequestSchema = z
  .looseObject({
    key: z
      .unknown()
      .optional()
      .openapi({ type: "string", enum: ["live", "test"], description: "Default live" }),
    mode: z
      .unknown()
      .optional()
      .openapi({
        type: "string",
        enum: ["immediate", "rotate"],
        description:
          "immediate: the old key stops now; rotate: it works until rotate_by, with deprecation notices",
      }),
    rotate_by: z.unknown().optional().openapi({
      type: "string",
      format: "date-time",
      description: "mode rotate: ISO 8601 with offset, after now, at most 90 days ahead",
    }),
  })
  .openapi("RegenerateApiKeyRequest");

const RegenerateResponseSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      api_key: z.string().openapi({ description: "The new key, shown this once" }),
      key: z.enum(["live", "test"]),
      masked: z.string(),
      mode: z.enum(["immediate", "rotate"]),
      previous: z.array(
        z.object({ masked: z.string(), revoked_at: z.string().nullable(), rotate_by: z.string().nullable() }),
      ),
    }),
  })
  .openapi("RegenerateApiKeyResponse");

export const regenerateKeyRoute = createRoute({
  method: "post",
  path: "/api/v1/programs/{id}/api-keys/regenerate",
  tags: ["Program settings"],
  summary: "Regenerate the program's live or test API key (owners only)",
  description:
    "Dashboard sign-in token of a workspace owner. The new key is shown in this answer only (only its SHA-256 " +
    "is stored). The old key of that mode stops at once (`mode: immediate`) or keeps working until `rotate_by` " +
    "(`mode: rotate`), answering with `Deprecation`, `Sunset`, `Link` and `warnings`, then 401 " +
    "`api_key_rotation_required`.",
  security: signedInSecurity,
  request: {
    params: ProgramIdParam,
    body: { required: true, content: { "application/json": { schema: RegenerateRequestSchema } } },
  },
  responses: {
    200: okResponse("The new key", RegenerateResponseSchema),
    ...bodyErrors,
    ...signedInErrors,
  },
});

export function registerApiKeys(app: OpenAPIHono<AppEnv>): void {
  app.use(
    "/api/v1/programs/:id/api-keys/regenerate",
    // The limiter (in `signedIn`) first, so a 413 carries the X-RateLimit-* headers like every answer.
    ...signedIn({ default: rateLimits.settingsWrite }),
    limitBody(),
  );
  app.openapi(regenerateKeyRoute, async (c) => {
    const { db, clock } = c.get("deps");
    const programId = parseProgramId(c.req.valid("param").id);
    const result = await regenerateApiKey(db, {
      userId: c.get("session")!.userId,
      programId,
      body: c.req.valid("json"),
      now: clock.now(),
    });
    if (!result.ok) {
      if (result.reason === "invalid") throw platformError(400, result.message);
      if (result.reason === "not_owner") throw platformError(403, OWNER_ONLY_MESSAGE);
      throw programAccessRefused();
    }
    c.get("log").info("program api key regenerated", { program_id: programId, mode: result.mode });
    return c.json(
      {
        success: true as const,
        data: {
          api_key: result.apiKey,
          key: result.isTest ? ("test" as const) : ("live" as const),
          masked: result.masked,
          mode: result.mode,
          previous: result.previous.map((p) => ({
            masked: p.masked,
            revoked_at: p.revokedAt?.toISOString() ?? null,
            rotate_by: p.rotateBy?.toISOString() ?? null,
          })),
        },
      },
      200,
    );
  });
}
