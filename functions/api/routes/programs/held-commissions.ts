import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { parseProgramId, programAccessRefused } from "../../../../lib/auth/require-program-membership.ts";
import {
  HELD_LIST_LIMIT,
  listHeldCommissions,
  type ReviewRefusal,
  reviewDecisions,
  reviewHeldCommission,
} from "../../../../lib/commissions/review-held-commissions.ts";
import { type ApiError, platformError } from "../../../../lib/errors/api-error.ts";
import { platformErrorResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { publishAfterResponse } from "../../../../lib/notifications/publish.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import {
  bodyErrors,
  okResponse,
  ProgramIdParam,
  signedIn,
  signedInErrors,
  signedInSecurity,
} from "./signed-in.ts";

export const COMMISSION_NOT_FOUND_MESSAGE = "Commission not found";
export const NOT_REVIEWER_MESSAGE = "Only a workspace owner or admin can review commissions";
export const NOT_HELD_MESSAGE =
  "This commission is not held for review: it was already decided, or never held";
export const INVALID_DECISION_MESSAGE = "decision must be `approve` or `reject`";

const HeldCommissionSchema = z
  .object({
    id: z.number().int(),
    sale_id: z.number().int(),
    partner_id: z.number().int(),
    partner_name: z.string(),
    amount_cents: z.number().int(),
    currency: z.string(),
    fraud_flags: z.array(z.string()),
    hold_until: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("HeldCommission");

const ReviewedCommissionSchema = z
  .object({
    id: z.number().int(),
    decision: z.enum(reviewDecisions),
    status: z.enum(["approved", "reversed"]),
    amount_cents: z.number().int(),
    deducted_cents: z.number().int(),
    currency: z.string(),
  })
  .openapi("ReviewedCommission");

const ReviewBodySchema = z
  .looseObject({
    decision: z
      .unknown()
      .optional()
      .openapi({ type: "string", enum: [...reviewDecisions] }),
  })
  .openapi("CommissionReviewRequest", { required: ["decision"] });

const CommissionParams = ProgramIdParam.extend({
  commissionId: z.string().openapi({ param: { name: "commissionId", in: "path" }, example: "7" }),
});

const reviewerNote = `Dashboard sign-in token of a workspace owner or admin (403 \`${NOT_REVIEWER_MESSAGE}\` for a member).`;
const tags = ["Fraud review"];

export const listHeldCommissionsRoute = createRoute({
  method: "get",
  path: "/api/v1/programs/{id}/commissions/held",
  tags,
  summary: "Commissions held for fraud review (hold_flagged_commissions)",
  description: `${reviewerNote} Pending commissions whose sale carries fraud flags, newest first, at most ${HELD_LIST_LIMIT}.`,
  security: signedInSecurity,
  request: { params: ProgramIdParam },
  responses: {
    200: okResponse(
      "The held commissions, newest first",
      z.object({
        success: z.literal(true),
        data: z.object({ commissions: z.array(HeldCommissionSchema) }),
      }),
    ),
    ...signedInErrors,
  },
});

export const reviewCommissionRoute = createRoute({
  method: "post",
  path: "/api/v1/programs/{id}/commissions/{commissionId}/review",
  tags,
  summary: "Approve (credit) or reject (reverse) a commission held for fraud review",
  description:
    `${reviewerNote} Approve does what the approval job does (credited once, \`commission.approved\`); reject ` +
    "reverses it whole (nothing was credited, `commission.updated` with reason `fraud_review`). The same " +
    "decision again answers the same; a different one, or a commission not held, is a 409.",
  security: signedInSecurity,
  request: {
    params: CommissionParams,
    body: { required: true, content: { "application/json": { schema: ReviewBodySchema } } },
  },
  responses: {
    200: okResponse(
      "The decided commission",
      z.object({ success: z.literal(true), data: z.object({ commission: ReviewedCommissionSchema }) }),
    ),
    ...bodyErrors,
    404: platformErrorResponse(COMMISSION_NOT_FOUND_MESSAGE),
    409: platformErrorResponse(NOT_HELD_MESSAGE),
    ...signedInErrors,
  },
});

function refusalError(refusal: ReviewRefusal): ApiError {
  if (refusal.reason === "invalid_decision") return platformError(400, INVALID_DECISION_MESSAGE);
  if (refusal.reason === "commission_not_found") return platformError(404, COMMISSION_NOT_FOUND_MESSAGE);
  if (refusal.reason === "not_held") return platformError(409, NOT_HELD_MESSAGE);
  if (refusal.reason === "not_manager") return platformError(403, NOT_REVIEWER_MESSAGE);
  return programAccessRefused();
}

export function registerHeldCommissions(app: OpenAPIHono<AppEnv>): void {
  const guard = signedIn({ default: rateLimits.settingsRead, POST: rateLimits.settingsWrite });
  app.use("/api/v1/programs/:id/commissions/*", ...guard, limitBody()); // a 413 carries X-RateLimit-*
  const actorOf = (c: Parameters<Parameters<typeof app.openapi>[1]>[0]) => {
    const params = c.req.param() as { id?: string; commissionId?: string };
    return {
      userId: c.get("session")!.userId,
      programId: parseProgramId(params.id),
      commissionId: parseProgramId(params.commissionId),
      now: c.get("deps").clock.now(),
    };
  };
  app.openapi(listHeldCommissionsRoute, async (c) => {
    const result = await listHeldCommissions(c.get("deps").db, actorOf(c));
    if (!result.ok) throw refusalError(result);
    return c.json({ success: true as const, data: { commissions: result.commissions } }, 200);
  });
  app.openapi(reviewCommissionRoute, async (c) => {
    const actor = actorOf(c);
    const result = await reviewHeldCommission(c.get("deps").db, actor, c.req.valid("json"));
    if (!result.ok) throw refusalError(result);
    publishAfterResponse(c, result.notifications);
    c.get("log").info("held commission reviewed", {
      program_id: actor.programId,
      commission_id: result.commission.id,
      decision: result.commission.decision,
    });
    return c.json({ success: true as const, data: { commission: result.commission } }, 200);
  });
}
