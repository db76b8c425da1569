import type { FraudFacts } from "./readiness-store.ts";

/**
 * Readiness's informational fraud section: how many of the newest live leads, sales and commissions (the
 * same sample the checks read) carry fraud signals, which codes, and the program's two fraud settings. It
 * is not a check: flags never block and never change the verdict, its counts or the next step.
 */
export interface ReadinessFraud {
  flagged: { leads: number; sales: number; commissions: number };
  codes: string[];
  hold_flagged_commissions: boolean;
  email_attribution_settled_leads_only: boolean;
  message: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function fraudSection(f: FraudFacts): ReadinessFraud {
  const flagged = { leads: f.flaggedLeads, sales: f.flaggedSales, commissions: f.flaggedCommissions };
  const any = flagged.leads + flagged.sales + flagged.commissions > 0;
  const holding = f.holdFlaggedCommissions
    ? "Flagged commissions are held for review when their hold ends."
    : "Flagged commissions are approved when their hold ends; set hold_flagged_commissions to hold them for review.";
  const message = any
    ? `Fraud signals among the newest live events: ${plural(flagged.leads, "lead")}, ` +
      `${plural(flagged.sales, "sale")}, ${plural(flagged.commissions, "commission")} (${f.codes.join(", ")}). ${holding}`
    : "No fraud signals among the newest live events.";
  return {
    flagged,
    codes: f.codes,
    hold_flagged_commissions: f.holdFlaggedCommissions,
    email_attribution_settled_leads_only: f.emailAttributionSettledOnly,
    message,
  };
}
