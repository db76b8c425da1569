import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import {
  parseProgramId,
  programAccessRefused,
  requireProgramMembership,
} from "../../../../lib/auth/require-program-membership.ts";
import { platformError } from "../../../../lib/errors/api-error.ts";
import { platformErrorResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { readProgramSettings } from "../../../../lib/programs/settings-store.ts";
import { settingsView } from "../../../../lib/programs/settings-view.ts";
import { updateProgramSettings } from "../../../../lib/programs/update-program-settings.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import {
  bodyErrors,
  okResponse,
  ProgramIdParam,
  signedIn,
  signedInErrors,
  signedInSecurity,
} from "./signed-in.ts";

const commissionTypeDoc = {
  type: "string" as const,
  enum: ["percent", "fixed", "recurring_percent", "recurring_fixed"],
};

const CommissionRuleSchema = z.object({
  product_id: z.string(),
  commission_type: z.string().openapi(commissionTypeDoc),
  commission_rate: z.number(),
  duration_months: z.number().int().nullable(),
});

export const SettingsSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      program_id: z.number().int(),
      workspace_id: z.number().int(),
      settings: z.object({
        name: z.string(),
        domain: z.string(),
        attribution_window_days: z.number().int(),
        lead_auth_policy: z.enum(["server_required", "browser_allowed"]),
        allowed_origins: z.array(z.string()),
        commission_type: z.string().openapi(commissionTypeDoc),
        commission_rate: z.number(),
        duration_months: z.number().int(),
        hold_days: z.number().int(),
        commission_rules: z.array(CommissionRuleSchema),
        stripe_account_id: z.string().nullable(),
        hold_flagged_commissions: z.boolean().openapi({
          description: "A commission with fraud flags stays pending for review when its hold ends",
        }),
        email_attribution_settled_leads_only: z.boolean().openapi({
          description:
            "A payment found only by the buyer's email is attributed to settled leads, never to a provisional one",
        }),
      }),
      api_key: z.string().nullable().openapi({ description: "The live key, masked: prefix...last four" }),
      test_api_key: z.string().nullable().openapi({ description: "The test key, masked" }),
      api_keys: z.array(
        z.object({
          id: z.number().int(),
          mode: z.enum(["live", "test"]),
          masked: z.string(),
          created_at: z.string(),
          rotate_by: z.string().nullable(),
        }),
      ),
      summary: z.array(z.string()).openapi({
        description: "Lines for people, among them `Lead capture mode: ...`",
      }),
      changed: z.array(z.string()).optional().openapi({ description: "PATCH: the fields that changed" }),
    }),
  })
  .openapi("ProgramSettings");

// Any shape passes the schema: the settings rules judge each field with a message naming it.
const SettingsPatchSchema = z
  .looseObject({
    name: z.unknown().optional().openapi({ type: "string" }),
    domain: z.unknown().optional().openapi({ type: "string", example: "shop.example.com" }),
    attribution_window_days: z.unknown().optional().openapi({ type: "integer", description: "1 to 365" }),
    lead_auth_policy: z
      .unknown()
      .optional()
      .openapi({ type: "string", enum: ["server_required", "browser_allowed"] }),
    allowed_origins: z
      .unknown()
      .optional()
      .openapi({
        type: "array",
        items: { type: "string" },
        description: "Exact origins scheme://host[:port]",
      }),
    commission_type: z.unknown().optional().openapi(commissionTypeDoc),
    commission_rate: z
      .unknown()
      .optional()
      .openapi({ type: "number", description: "At most 100 for percent types" }),
    duration_months: z.unknown().optional().openapi({ type: "integer", description: "0 = lifetime" }),
    hold_days: z.unknown().optional().openapi({ type: "integer", description: "0 to 365" }),
    commission_rules: z.unknown().optional().openapi({
      type: "array",
      description:
        "Replaces every per-product rule: {product_id, commission_type, commission_rate, duration_months?}",
    }),
    stripe_account_id: z
      .unknown()
      .optional()
      .openapi({ type: ["string", "null"], description: "acct_... to connect directly; null disconnects" }),
    hold_flagged_commissions: z.unknown().optional().openapi({
      type: "boolean",
      description: "Hold flagged commissions for review instead of approving them",
    }),
    email_attribution_settled_leads_only: z.unknown().optional().openapi({
      type: "boolean",
      description: "Attribute payments found by email only to settled leads (not provisional ones)",
    }),
  })
  .openapi("ProgramSettingsPatch");

const path = "/api/v1/programs/{id}/settings";
const honoPath = "/api/v1/programs/:id/settings";

export const getSettingsRoute = createRoute({
  method: "get",
  path,
  tags: ["Program settings"],
  summary: "A program's settings, its keys masked, and a summary for people",
  description:
    "Dashboard sign-in token; active membership on the program's workspace. 30 per minute per token.",
  security: signedInSecurity,
  request: { params: ProgramIdParam },
  responses: { 200: okResponse("The settings", SettingsSchema), ...signedInErrors },
});

export const patchSettingsRoute = createRoute({
  method: "patch",
  path,
  tags: ["Program settings"],
  summary: "Change any settings at once (validated, atomic, audited)",
  description:
    "Dashboard sign-in token; active membership. 30 per minute per token. Send only the settings to change; " +
    "all are applied in one transaction or none, and each change is recorded in the audit log (who, when, " +
    "field, from, to). `stripe_account_id` connects an account directly (local use, tests); `null` disconnects.",
  security: signedInSecurity,
  request: {
    params: ProgramIdParam,
    body: { required: true, content: { "application/json": { schema: SettingsPatchSchema } } },
  },
  responses: {
    200: okResponse("The settings after the change", SettingsSchema),
    ...bodyErrors,
    ...signedInErrors,
    409: platformErrorResponse("stripe_account_id is already connected to another program"),
  },
});

export const ACCOUNT_TAKEN_MESSAGE = "stripe_account_id is already connected to another program";

export function registerProgramSettings(app: OpenAPIHono<AppEnv>): void {
  app.use(
    honoPath,
    // The limiter (in `signedIn`) first, so a 413 carries the X-RateLimit-* headers like every answer.
    ...signedIn({ default: rateLimits.settingsRead, PATCH: rateLimits.settingsWrite }),
    limitBody(),
  );
  app.openapi(getSettingsRoute, async (c) => {
    const { db, clock } = c.get("deps");
    const programId = parseProgramId(c.req.valid("param").id);
    const membership = await requireProgramMembership(db, c.get("session")!.userId, programId);
    if (!membership.ok || programId === undefined) throw programAccessRefused();
    const stored = await readProgramSettings(db, programId);
    if (!stored) throw programAccessRefused();
    return c.json({ success: true as const, data: settingsView(stored, clock.now()) }, 200);
  });
  app.openapi(patchSettingsRoute, async (c) => {
    const { db, clock } = c.get("deps");
    const session = c.get("session")!;
    const programId = parseProgramId(c.req.valid("param").id);
    const result = await updateProgramSettings(db, {
      userId: session.userId,
      programId,
      body: c.req.valid("json"),
      now: clock.now(),
    });
    if (!result.ok) {
      if (result.reason === "no_access") throw programAccessRefused();
      if (result.reason === "account_taken") throw platformError(409, ACCOUNT_TAKEN_MESSAGE);
      throw platformError(400, result.message);
    }
    c.get("log").info("program settings changed", { program_id: programId, fields: result.changed.length });
    return c.json(
      {
        success: true as const,
        data: { ...settingsView(result.stored, clock.now()), changed: result.changed },
      },
      200,
    );
  });
}
