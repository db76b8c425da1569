import { type ApiError, badRequest, platformError, typedError } from "../../errors/api-error.ts";

/** What one database read told us (see `click-store.ts`). */
export interface ClickFacts {
  /** null when the request named no program. */
  requestedProgramExists: boolean | null;
  /** The program of the Bearer key sent, when it matched one. */
  keyProgramId: number | null;
  link: {
    id: number;
    programId: number | null;
    partnerId: number | null;
    isActive: boolean;
    programExists: boolean;
    attributionWindowDays: number | null;
    allowedOrigins: string[] | null;
  } | null;
  /** The visitor's earlier click id, when it is of the same program and still inside the window. */
  retainedClickId: string | null;
}

export interface ClickIntent {
  requestedProgramId: number | null;
  /** `additional_data.program_id`, checked against the key's program in test mode. */
  eventProgramId: number | null;
  testMode: boolean;
  newClickId: string;
}

export type ClickDecision =
  | { outcome: "refused"; error: ApiError }
  | { outcome: "recorded"; clickId: string; cookieWindowDays: number };

/**
 * The click rules, in the order the spec's errors are checked. `click-store.ts` applies the same
 * eligibility when it inserts, in the same statement; the handler checks the two agree.
 */
export function decideClick(intent: ClickIntent, facts: ClickFacts): ClickDecision {
  const refuse = (error: ApiError): ClickDecision => ({ outcome: "refused", error });
  if (
    intent.testMode &&
    facts.keyProgramId !== null &&
    intent.eventProgramId !== null &&
    facts.keyProgramId !== intent.eventProgramId
  ) {
    return refuse(platformError(403, "program_id does not match the API key"));
  }
  if (intent.requestedProgramId !== null && facts.requestedProgramExists !== true) {
    return refuse(badRequest("Unknown program_id"));
  }
  const link = facts.link;
  if (!link) return refuse(badRequest("Referral link not found"));
  if (link.programId === null || link.partnerId === null || !link.programExists) {
    return refuse(badRequest("Invalid referral link configuration"));
  }
  if (intent.requestedProgramId !== null && link.programId !== intent.requestedProgramId) {
    return refuse(badRequest("Referral link not found"));
  }
  if (!link.isActive) {
    const message = "This referral link has been disabled";
    const hint = "The partner or the brand turned this link off. Ask the partner for an active link.";
    return refuse(typedError(410, "link_disabled", message, { hint }, { success: false, message, hint }));
  }
  return {
    outcome: "recorded",
    clickId: facts.retainedClickId ?? intent.newClickId,
    cookieWindowDays: link.attributionWindowDays ?? 60,
  };
}
