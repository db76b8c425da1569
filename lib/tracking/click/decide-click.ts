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
    /** A verification fixture's link: it takes test clicks only. */
    testOnly: boolean;
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

/** Why a click is not recorded, in the order the spec's errors are checked (`click-outcome-http.ts` words them). */
export type ClickRefusal =
  | "program_mismatch"
  | "unknown_program"
  | "link_not_found"
  | "link_misconfigured"
  | "link_disabled";

export type ClickDecision =
  | { outcome: "refused"; refusal: ClickRefusal }
  | { outcome: "recorded"; clickId: string; cookieWindowDays: number };

/**
 * The click rules, in the order the spec's errors are checked. `click-store.ts` applies the same
 * eligibility when it inserts, in the same statement; the handler checks the two agree.
 */
export function decideClick(intent: ClickIntent, facts: ClickFacts): ClickDecision {
  const refuse = (refusal: ClickRefusal): ClickDecision => ({ outcome: "refused", refusal });
  if (
    intent.testMode &&
    facts.keyProgramId !== null &&
    intent.eventProgramId !== null &&
    facts.keyProgramId !== intent.eventProgramId
  ) {
    return refuse("program_mismatch");
  }
  if (intent.requestedProgramId !== null && facts.requestedProgramExists !== true) {
    return refuse("unknown_program");
  }
  const link = facts.link;
  // A verification fixture's link does not exist for a live click: no live visitor reaches the test chain's
  // partner through it.
  if (!link || (link.testOnly && !intent.testMode)) return refuse("link_not_found");
  if (link.programId === null || link.partnerId === null || !link.programExists) {
    return refuse("link_misconfigured");
  }
  if (intent.requestedProgramId !== null && link.programId !== intent.requestedProgramId) {
    return refuse("link_not_found");
  }
  if (!link.isActive) return refuse("link_disabled");
  return {
    outcome: "recorded",
    clickId: facts.retainedClickId ?? intent.newClickId,
    cookieWindowDays: link.attributionWindowDays ?? 60,
  };
}
