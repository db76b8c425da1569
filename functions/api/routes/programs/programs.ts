import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { platformError } from "../../../../lib/errors/api-error.ts";
import { platformErrorResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { createProgram, workspaceRefusalMessages } from "../../../../lib/programs/create-program.ts";
import { listMyPrograms } from "../../../../lib/programs/list-my-programs.ts";
import { newProgramFields } from "../../../../lib/programs/new-program-fields.ts";
import { checkNewProgram } from "../../../../lib/programs/program-rules.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { bodyErrors, okResponse, signedIn, signedInErrors, signedInSecurity } from "./signed-in.ts";

const NewProgramSchema = z
  .looseObject({
    ...newProgramFields,
    advertiser_id: z.unknown().optional().openapi({
      type: "integer",
      description: "A workspace you own or administer; left out, your own",
    }),
  })
  .openapi("NewProgramRequest");

const ProgramSummary = z.object({
  id: z.number().int(),
  name: z.string(),
  domain: z.string(),
  workspace_id: z.number().int(),
  role: z.string(),
  created_at: z.string(),
});

export const createProgramRoute = createRoute({
  method: "post",
  path: "/api/v1/programs",
  tags: ["Programs"],
  summary: "Create a program in the signed-in person's workspace",
  description:
    "Dashboard sign-in token of a workspace owner or admin. The rules and messages are those of the " +
    "command-line `init`. The live and test API keys are shown in this answer only.",
  security: signedInSecurity,
  request: { body: { required: true, content: { "application/json": { schema: NewProgramSchema } } } },
  responses: {
    201: okResponse(
      "The program and its keys",
      z.object({
        success: z.literal(true),
        data: z.object({
          program: z.object({
            id: z.number().int(),
            workspace_id: z.number().int(),
            name: z.string(),
            domain: z.string(),
          }),
          api_key: z.string(),
          test_api_key: z.string(),
        }),
      }),
    ),
    ...bodyErrors,
    ...signedInErrors,
    403: platformErrorResponse(
      "No advertiser found for this account (no workspace you own or administer); advertiser_id does not " +
        "match the authenticated account (a workspace you do not own or administer)",
    ),
  },
});

export const listProgramsRoute = createRoute({
  method: "get",
  path: "/api/v1/programs",
  tags: ["Programs"],
  summary: "The programs of the signed-in person's workspaces",
  security: signedInSecurity,
  responses: {
    200: okResponse(
      "The programs",
      z.object({ success: z.literal(true), data: z.object({ programs: z.array(ProgramSummary) }) }),
    ),
    ...signedInErrors,
  },
});

export function registerPrograms(app: OpenAPIHono<AppEnv>): void {
  // The limiter (in `signedIn`) first, so a 413 carries the X-RateLimit-* headers like every answer.
  app.use("/api/v1/programs", ...signedIn({ default: rateLimits.dashboard }), limitBody());
  app.openapi(createProgramRoute, async (c) => {
    const { db } = c.get("deps");
    const body = c.req.valid("json");
    const checked = checkNewProgram(body);
    if (!checked.ok) throw platformError(400, checked.message);
    const created = await createProgram(db, {
      userId: c.get("session")!.userId,
      advertiserId: body.advertiser_id,
      fields: checked.value,
    });
    if (!created.ok) throw platformError(403, workspaceRefusalMessages[created.reason]);
    c.get("log").info("program created", { program_id: created.programId });
    return c.json(
      {
        success: true as const,
        data: {
          program: {
            id: created.programId,
            workspace_id: created.advertiserId,
            name: checked.value.name,
            domain: checked.value.domain,
          },
          api_key: created.apiKey,
          test_api_key: created.testApiKey,
        },
      },
      201,
    );
  });
  app.openapi(listProgramsRoute, async (c) => {
    const programs = await listMyPrograms(c.get("deps").db, c.get("session")!.userId);
    return c.json({ success: true as const, data: { programs } }, 200);
  });
}
