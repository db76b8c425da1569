import type { BearerHeader } from "../auth/bearer.ts";
import type { Database } from "../db/client.ts";
import { createProgram } from "../programs/create-program.ts";
import { checkNewProgram, type NewProgramFields } from "../programs/program-rules.ts";
import { evaluateLoginToken, type LoginTokenRefusal, loginTokenQuery } from "./login-token-auth.ts";

export type InitRefusal =
  | { kind: "token"; reason: LoginTokenRefusal }
  | { kind: "field"; message: string }
  | { kind: "workspace"; reason: "no_advertiser" | "advertiser_mismatch" };

export type InitResult =
  | { outcome: "refused"; refusal: InitRefusal }
  | {
      outcome: "created";
      programId: number;
      workspaceId: number;
      fields: NewProgramFields;
      apiKey: string;
      testApiKey: string;
    };

/**
 * `init`: the login token names the person; the body is judged by the program rules (spec section 7's init
 * table, in its order); `advertiser_id`, when sent, must be a workspace the person owns or administers;
 * the program and its keys are created by the shared create-program use case.
 */
export async function initProgram(
  db: Database,
  now: Date,
  input: { header: BearerHeader; tokenHash: string; body: Record<string, unknown> },
): Promise<InitResult> {
  const [tokenRows] = await db.batch([loginTokenQuery(db, input.tokenHash)]);
  const verdict = evaluateLoginToken(input.header, tokenRows[0], now);
  if (!verdict.ok) return { outcome: "refused", refusal: { kind: "token", reason: verdict.reason } };
  const checked = checkNewProgram(input.body);
  if (!checked.ok) return { outcome: "refused", refusal: { kind: "field", message: checked.message } };
  const created = await createProgram(db, {
    userId: verdict.userId,
    advertiserId: input.body.advertiser_id,
    fields: checked.value,
  });
  if (!created.ok) return { outcome: "refused", refusal: { kind: "workspace", reason: created.reason } };
  return {
    outcome: "created",
    programId: created.programId,
    workspaceId: created.advertiserId,
    fields: checked.value,
    apiKey: created.apiKey,
    testApiKey: created.testApiKey,
  };
}
