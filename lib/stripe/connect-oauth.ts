import { requireProgramMembership } from "../auth/require-program-membership.ts";
import type { StripeConnectConfig } from "../config/env.ts";
import type { Database } from "../db/client.ts";
import { consumeOauthState, newState, saveOauthState } from "../identity/oauth-state-store.ts";
import { updateProgramSettings } from "../programs/update-program-settings.ts";

/**
 * The payments provider's Connect OAuth (standard accounts): start sends the person to
 * connect.stripe.com/oauth/authorize with a one-time state bound to them and the program; the callback
 * takes the state out (once), exchanges the code at the provider's documented token endpoint
 * (`POST https://connect.stripe.com/oauth/token`, the platform's secret key as bearer, a form body) and
 * stores the connected account id through the settings use case (validated, atomic, audited, unique across
 * programs). Plain `fetch` rather than the provider's SDK: the SDK is most of a worker's size, and these two
 * documented calls are all this worker needs of it.
 */
const connectOrigin = "https://connect.stripe.com";

/** Where the token exchange goes: the provider's own host, or the configured local stand-in. */
function tokenEndpoint(config: StripeConnectConfig): string {
  if (!config.host) return `${connectOrigin}/oauth/token`;
  const protocol = config.protocol ?? "https";
  return `${protocol}://${config.host}${config.port ? `:${config.port}` : ""}/oauth/token`;
}

/** A deployment without the platform's key and client id: the Connect routes cannot work (a 500). */
export function connectNotConfigured(): Error {
  return new Error("payments provider Connect is not configured");
}

/** Exchanges an authorization code for the connected account id; undefined when the provider refuses. */
async function exchangeCode(config: StripeConnectConfig, code: string): Promise<string | undefined> {
  const response = await fetch(tokenEndpoint(config), {
    method: "POST",
    headers: {
      Authorization: `Bearer ${config.secretKey}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ grant_type: "authorization_code", code }),
  });
  if (!response.ok) {
    await response.body?.cancel();
    return undefined;
  }
  const token = (await response.json()) as { stripe_user_id?: unknown };
  return typeof token.stripe_user_id === "string" ? token.stripe_user_id : undefined;
}

export type StartConnectResult = { ok: true; authorizeUrl: string } | { ok: false; reason: "no_access" };

export async function startStripeConnect(
  db: Database,
  /** Unset when the platform's key and client id are not configured: a 500, but only for a member. */
  config: StripeConnectConfig | undefined,
  input: { userId: number; programId: number | undefined; redirectUri: string; now: Date },
): Promise<StartConnectResult> {
  // Membership first: a stranger learns nothing of the program, or of the deployment, from the answer.
  const membership = await requireProgramMembership(db, input.userId, input.programId);
  if (!membership.ok || input.programId === undefined) return { ok: false, reason: "no_access" };
  if (!config) throw connectNotConfigured();
  const state = newState();
  await saveOauthState(
    db,
    state,
    { purpose: "stripe_connect", userId: input.userId, programId: input.programId },
    input.now,
  );
  // Never the local host override: the person always goes to the provider's own page.
  const query = new URLSearchParams({
    response_type: "code",
    client_id: config.clientId,
    scope: "read_write",
    state,
    redirect_uri: input.redirectUri,
  });
  const authorizeUrl = `${connectOrigin}/oauth/authorize?${query}`;
  return { ok: true, authorizeUrl };
}

export type FinishConnectResult =
  | { ok: true; programId: number; accountId: string }
  | { ok: false; reason: "state_invalid" | "denied" | "exchange_failed" | "no_access" | "account_taken" };

export async function finishStripeConnect(
  db: Database,
  config: StripeConnectConfig,
  input: {
    userId: number;
    state: string | undefined;
    code: string | undefined;
    error: string | undefined;
    now: Date;
  },
): Promise<FinishConnectResult> {
  if (!input.state) return { ok: false, reason: "state_invalid" };
  const flow = await consumeOauthState(db, input.state, "stripe_connect", input.now);
  // A state is bound to the person who started it: another person's browser cannot finish it.
  if (!flow || flow.userId !== input.userId || !flow.programId) return { ok: false, reason: "state_invalid" };
  if (input.error || !input.code) return { ok: false, reason: "denied" };
  let accountId: string | undefined;
  try {
    accountId = await exchangeCode(config, input.code);
  } catch {
    return { ok: false, reason: "exchange_failed" };
  }
  if (!accountId) return { ok: false, reason: "exchange_failed" };
  const applied = await updateProgramSettings(db, {
    userId: input.userId,
    programId: flow.programId,
    body: { stripe_account_id: accountId },
    now: input.now,
  });
  if (!applied.ok) {
    if (applied.reason === "account_taken") return { ok: false, reason: "account_taken" };
    if (applied.reason === "invalid") return { ok: false, reason: "exchange_failed" };
    return { ok: false, reason: "no_access" };
  }
  return { ok: true, programId: flow.programId, accountId };
}
