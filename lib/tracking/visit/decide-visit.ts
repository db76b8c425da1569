/** What the one statement of `visit-store.ts` found: the visitor's original click, if any. */
export interface VisitFacts {
  click: {
    clickId: string;
    programId: number;
    partnerId: number;
    isTest: boolean;
    allowedOrigins: string[];
  } | null;
}

export interface VisitIntent {
  /** The page's program, when the tracker sent it. */
  programId: number | null;
}

/** The one refusal: no click of the page's program under that id (`visit-outcome-http.ts` words it). */
export type VisitRefusal = "unknown_click";

export type VisitDecision = { outcome: "refused"; refusal: VisitRefusal } | { outcome: "recorded" };

/**
 * A visit is recorded for a known click (any age: the page view happened; attribution is measured from the
 * click, not from visits), of the page's program when one is named. `visit-store.ts` inserts under the
 * same condition in the same statement; the handler checks the two agree.
 */
export function decideVisit(intent: VisitIntent, facts: VisitFacts): VisitDecision {
  const click = facts.click;
  if (!click || (intent.programId !== null && click.programId !== intent.programId)) {
    return { outcome: "refused", refusal: "unknown_click" };
  }
  return { outcome: "recorded" };
}
