import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { parseProgramId, programAccessRefused } from "../../../../lib/auth/require-program-membership.ts";
import { platformError } from "../../../../lib/errors/api-error.ts";
import { platformErrorResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import {
  connectNotConfigured,
  finishStripeConnect,
  startStripeConnect,
} from "../../../../lib/stripe/connect-oauth.ts";
import { ACCOUNT_TAKEN_MESSAGE } from "./settings.ts";
import { ProgramIdParam, signedIn, signedInErrors, signedInSecurity } from "./signed-in.ts";

export const CONNECT_STATE_INVALID =
  "Connection expired, was already used or was started by someone else. Start again.";
export const CONNECT_DENIED = "The connection was not approved at the payments provider";
export const CONNECT_EXCHANGE_FAILED = "The payments provider did not accept the authorization. Start again.";
const CALLBACK_PATH = "/api/v1/programs/stripe-connect/callback";

/** A query parameter sent twice arrives as a list: refused with a message naming it. */
const once = (name: string) => z.string({ error: `${name} must be given once, as a string` }).optional();

const redirect = (description: string) => ({
  description,
  headers: { Location: { schema: { type: "string" as const } } },
});

export const startConnectRoute = createRoute({
  method: "get",
  path: "/api/v1/programs/{id}/stripe-connect",
  tags: ["Program settings"],
  summary: "Connect the payments provider: redirect to its Connect OAuth page",
  description:
    "Opened by the signed-in browser (sign-in cookie). Redirects to connect.stripe.com/oauth/authorize with a " +
    "one-time state (10 minutes) bound to the person and the program.",
  security: signedInSecurity,
  request: { params: ProgramIdParam },
  responses: { 302: redirect("To the provider's authorization page"), ...signedInErrors },
});

export const connectCallbackRoute = createRoute({
  method: "get",
  path: CALLBACK_PATH,
  tags: ["Program settings"],
  summary: "The provider sends the browser back here; the code is exchanged and the account connected",
  security: signedInSecurity,
  request: {
    query: z.object({
      code: once("code"),
      state: once("state"),
      error: once("error"),
      error_description: once("error_description"),
      scope: once("scope"),
    }),
  },
  responses: {
    303: redirect("To the program's settings, now connected"),
    400: platformErrorResponse(`${CONNECT_STATE_INVALID}; ${CONNECT_DENIED}; ${CONNECT_EXCHANGE_FAILED}`),
    409: platformErrorResponse(ACCOUNT_TAKEN_MESSAGE),
    ...signedInErrors,
  },
});

function connectConfig(config: AppEnv["Variables"]["deps"]["config"]) {
  // Without the platform key and client id the routes cannot work: a server misconfiguration (500).
  if (!config.stripeConnect) throw connectNotConfigured();
  return config.stripeConnect;
}

export function registerStripeConnect(app: OpenAPIHono<AppEnv>): void {
  const guard = signedIn({ default: rateLimits.dashboard });
  app.use("/api/v1/programs/:id/stripe-connect", ...guard);
  app.use(CALLBACK_PATH, ...guard);
  app.openapi(startConnectRoute, async (c) => {
    const { db, clock, config } = c.get("deps");
    const result = await startStripeConnect(db, config.stripeConnect, {
      userId: c.get("session")!.userId,
      programId: parseProgramId(c.req.valid("param").id),
      redirectUri: `${new URL(c.req.url).origin}${CALLBACK_PATH}`,
      now: clock.now(),
    });
    if (!result.ok) throw programAccessRefused();
    return c.redirect(result.authorizeUrl, 302);
  });
  app.openapi(connectCallbackRoute, async (c) => {
    const { db, clock, config } = c.get("deps");
    const query = c.req.valid("query");
    const result = await finishStripeConnect(db, connectConfig(config), {
      userId: c.get("session")!.userId,
      state: query.state,
      code: query.code,
      error: query.error,
      now: clock.now(),
    });
    if (!result.ok) {
      if (result.reason === "state_invalid") throw platformError(400, CONNECT_STATE_INVALID);
      if (result.reason === "denied") throw platformError(400, CONNECT_DENIED);
      if (result.reason === "exchange_failed") throw platformError(400, CONNECT_EXCHANGE_FAILED);
      if (result.reason === "account_taken") throw platformError(409, ACCOUNT_TAKEN_MESSAGE);
      throw programAccessRefused();
    }
    c.get("log").info("payments account connected", { program_id: result.programId });
    return c.redirect(`/api/v1/programs/${result.programId}/settings`, 303);
  });
}
