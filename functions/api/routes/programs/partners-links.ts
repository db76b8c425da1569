import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { parseProgramId, programAccessRefused } from "../../../../lib/auth/require-program-membership.ts";
import { type ApiError, platformError } from "../../../../lib/errors/api-error.ts";
import { platformErrorResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import {
  addPartner,
  createReferralLink,
  listReferralLinks,
  type Refusal,
  setReferralLinkActive,
} from "../../../../lib/programs/referral-links.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import {
  bodyErrors,
  okResponse,
  ProgramIdParam,
  signedIn,
  signedInErrors,
  signedInSecurity,
} from "./signed-in.ts";

export const SHORT_LINK_TAKEN_MESSAGE = "short_link is already taken";
export const LINK_NOT_FOUND_MESSAGE = "Referral link not found";

const PartnerRequestSchema = z
  .looseObject({
    name: z.unknown().optional().openapi({ type: "string" }),
    email: z.unknown().optional().openapi({ type: "string", format: "email" }),
  })
  .openapi("AddPartnerRequest");

const PartnerResponseSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      partner: z.object({ id: z.number().int(), name: z.string(), email: z.string(), status: z.string() }),
    }),
  })
  .openapi("PartnerResponse");

const LinkSchema = z
  .object({
    id: z.number().int(),
    short_link: z.string(),
    partner_id: z.number().int().nullable(),
    partner_name: z.string().nullable(),
    active: z.boolean(),
    disabled_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("ReferralLink");

const LinkResponseSchema = z.object({ success: z.literal(true), data: z.object({ link: LinkSchema }) });

const NewLinkRequestSchema = z
  .looseObject({
    partner_id: z
      .unknown()
      .optional()
      .openapi({ type: "integer", description: "An active partner of the program" }),
    short_link: z
      .unknown()
      .optional()
      .openapi({
        type: "string",
        description:
          "3 to 64 letters, digits, '-' or '_', starting with a letter or digit, not starting with `synthetic-verify-` " +
          "(the verification chain's links); unique across the service. Omitted: generated",
      }),
  })
  .openapi("NewReferralLinkRequest");

const LinkStateRequestSchema = z
  .looseObject({ active: z.unknown().optional().openapi({ type: "boolean" }) })
  .openapi("ReferralLinkStateRequest");

const LinkParams = ProgramIdParam.extend({
  linkId: z.string().openapi({ param: { name: "linkId", in: "path" }, example: "7" }),
});

export const addPartnerRoute = createRoute({
  method: "post",
  path: "/api/v1/programs/{id}/partners",
  tags: ["Partners and links"],
  summary: "Add a partner to the program (a new one, or the existing partner with that email)",
  security: signedInSecurity,
  request: {
    params: ProgramIdParam,
    body: { required: true, content: { "application/json": { schema: PartnerRequestSchema } } },
  },
  responses: {
    201: okResponse("The partner, active in the program", PartnerResponseSchema),
    ...bodyErrors,
    ...signedInErrors,
  },
});

export const listLinksRoute = createRoute({
  method: "get",
  path: "/api/v1/programs/{id}/links",
  tags: ["Partners and links"],
  summary: "The program's referral links with their state (oldest first, at most 1000)",
  security: signedInSecurity,
  request: { params: ProgramIdParam },
  responses: {
    200: okResponse(
      "The links",
      z.object({ success: z.literal(true), data: z.object({ links: z.array(LinkSchema) }) }),
    ),
    ...signedInErrors,
  },
});

export const createLinkRoute = createRoute({
  method: "post",
  path: "/api/v1/programs/{id}/links",
  tags: ["Partners and links"],
  summary: "Create a referral link for a partner of the program",
  security: signedInSecurity,
  request: {
    params: ProgramIdParam,
    body: { required: true, content: { "application/json": { schema: NewLinkRequestSchema } } },
  },
  responses: {
    201: okResponse("The new link, active", LinkResponseSchema),
    ...bodyErrors,
    ...signedInErrors,
    409: platformErrorResponse("short_link is already taken (by any program)"),
  },
});

export const setLinkStateRoute = createRoute({
  method: "patch",
  path: "/api/v1/programs/{id}/links/{linkId}",
  tags: ["Partners and links"],
  summary: "Turn a referral link off or on",
  description:
    "A link turned off makes `POST /api/v1/track/click` answer 410 `link_disabled` and record nothing.",
  security: signedInSecurity,
  request: {
    params: LinkParams,
    body: { required: true, content: { "application/json": { schema: LinkStateRequestSchema } } },
  },
  responses: {
    200: okResponse("The link", LinkResponseSchema),
    ...bodyErrors,
    ...signedInErrors,
    404: platformErrorResponse("Referral link not found (no such link in this program)"),
  },
});

function refusalError(refusal: Refusal): ApiError {
  if (refusal.reason === "invalid") return platformError(400, refusal.message);
  if (refusal.reason === "short_link_taken") return platformError(409, SHORT_LINK_TAKEN_MESSAGE);
  if (refusal.reason === "link_not_found") return platformError(404, LINK_NOT_FOUND_MESSAGE);
  return programAccessRefused();
}

export function registerPartnersAndLinks(app: OpenAPIHono<AppEnv>): void {
  const guard = signedIn({ default: rateLimits.dashboard });
  for (const path of [
    "/api/v1/programs/:id/partners",
    "/api/v1/programs/:id/links",
    "/api/v1/programs/:id/links/:linkId",
  ]) {
    app.use(path, ...guard, limitBody()); // the limiter first: a 413 carries X-RateLimit-*
  }
  app.openapi(addPartnerRoute, async (c) => {
    const { db, clock } = c.get("deps");
    const programId = parseProgramId(c.req.valid("param").id);
    const actor = { userId: c.get("session")!.userId, programId, now: clock.now() };
    const result = await addPartner(db, actor, c.req.valid("json"));
    if (!result.ok) throw refusalError(result);
    c.get("log").info("program partner added", { program_id: programId, partner_id: result.partner.id });
    return c.json({ success: true as const, data: { partner: result.partner } }, 201);
  });
  app.openapi(listLinksRoute, async (c) => {
    const { db, clock } = c.get("deps");
    const programId = parseProgramId(c.req.valid("param").id);
    const result = await listReferralLinks(db, {
      userId: c.get("session")!.userId,
      programId,
      now: clock.now(),
    });
    if (!result.ok) throw refusalError(result);
    return c.json({ success: true as const, data: { links: result.links } }, 200);
  });
  app.openapi(createLinkRoute, async (c) => {
    const { db, clock } = c.get("deps");
    const programId = parseProgramId(c.req.valid("param").id);
    const actor = { userId: c.get("session")!.userId, programId, now: clock.now() };
    const result = await createReferralLink(db, actor, c.req.valid("json"));
    if (!result.ok) throw refusalError(result);
    c.get("log").info("referral link created", { program_id: programId, link_id: result.link.id });
    return c.json({ success: true as const, data: { link: result.link } }, 201);
  });
  app.openapi(setLinkStateRoute, async (c) => {
    const { db, clock } = c.get("deps");
    const params = c.req.valid("param");
    const programId = parseProgramId(params.id);
    const actor = {
      userId: c.get("session")!.userId,
      programId,
      now: clock.now(),
      linkId: parseProgramId(params.linkId),
    };
    const result = await setReferralLinkActive(db, actor, c.req.valid("json"));
    if (!result.ok) throw refusalError(result);
    c.get("log").info("referral link state set", {
      program_id: programId,
      link_id: result.link.id,
      active: result.link.active,
    });
    return c.json({ success: true as const, data: { link: result.link } }, 200);
  });
}
