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
  hold_days: number;
  email_attribution_settled_leads_only: boolean;
  message: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function fraudSection(f: FraudFacts): ReadinessFraud {
  const flagged = { leads: f.flaggedLeads, sales: f.flaggedSales, commissions: f.flaggedCommissions };
  const any = flagged.leads + flagged.sales + flagged.commissions > 0;
  const message = any
    ? `Fraud signals among the newest live events: ${plural(flagged.leads, "lead")}, ` +
      `${plural(flagged.sales, "sale")}, ${plural(flagged.commissions, "commission")} (${f.codes.join(", ")}). ` +
      holdingSentence(f)
    : "No fraud signals among the newest live events.";
  return {
    flagged,
    codes: f.codes,
    hold_flagged_commissions: f.holdFlaggedCommissions,
    hold_days: f.holdDays,
    email_attribution_settled_leads_only: f.emailAttributionSettledOnly,
    message,
  };
}

/**
 * What happens to a flagged commission. With a 0-day hold none is held, whatever the setting says: the
 * commission is approved with its sale, before the fraud scan has looked at it (the settings summary says
 * the same, lib/programs/settings-view.ts).
 */
function holdingSentence(f: FraudFacts): string {
  if (f.holdDays === 0) {
    const toHold = f.holdFlaggedCommissions
      ? "set hold_days to 1 or more"
      : "set hold_flagged_commissions, and hold_days to 1 or more,";
    return (
      "Flagged commissions are not held: with a hold period of 0 days a commission is approved with its sale, " +
      `before the fraud scan; ${toHold} to hold them for review.`
    );
  }
  if (f.holdFlaggedCommissions) return "Flagged commissions are held for review when their hold ends.";
  return "Flagged commissions are approved when their hold ends; set hold_flagged_commissions to hold them for review.";
}
