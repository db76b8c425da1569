/**
 * The fraud signal codes stored in `fraud_flags` (leads, sales, commissions): stable strings, documented in the
 * README ("Fraud signals") and in the OpenAPI descriptions. Never blocking by themselves; a program may hold
 * flagged commissions for review (`hold_flagged_commissions`).
 */
export const fraudCodes = [
  "self_referral",
  "disposable_email",
  "partner_device",
  "fast_conversion",
  "ip_velocity",
  "lead_steering",
] as const;
export type FraudCode = (typeof fraudCodes)[number];

/** The thresholds of the signals (README, "Fraud signals"), in seconds unless named otherwise. */
export const fraudThresholds = {
  /** A lead sooner than this after its click is no person filling a signup form. */
  fastLeadSeconds: 5,
  /** A sale sooner than this after the customer's click is no person going through a checkout. */
  fastSaleSeconds: 30,
  /** `ip_velocity`: this many distinct customers' leads from one address in one program ... */
  velocityCustomers: 5,
  /** ... within this window (the lead itself and those before it). */
  velocityWindowSeconds: 3600,
  /** `partner_device`: how far back an address's earlier leads for the same partner are looked at. */
  partnerDeviceWindowDays: 30,
} as const;

/** Rows one scan statement takes at most: a backlog is worked through over successive runs. */
export const fraudScanBatch = 1000;

/**
 * The codes as the OpenAPI document describes them, for every schema field that shows `fraud_flags` (the
 * events route, readiness, settings): one sentence per code, the README's definitions in short. A function, so
 * a bundle that shows no flags does not carry the text.
 */
export const fraudFlagsDescription = (): string =>
  "Fraud signal codes found by the scan after the fact (never blocking by default; README, Fraud signals): " +
  "`self_referral` (the partner's own email, or its private email domain), `disposable_email` (a disposable " +
  "email domain), `partner_device` (from an address that already converted another customer of the same " +
  `partner within ${fraudThresholds.partnerDeviceWindowDays} days), \`fast_conversion\` (a lead within ` +
  `${fraudThresholds.fastLeadSeconds} s or a sale within ${fraudThresholds.fastSaleSeconds} s of the click), ` +
  `\`ip_velocity\` (${fraudThresholds.velocityCustomers} or more customers' leads from one address within ` +
  `${fraudThresholds.velocityWindowSeconds / 60} minutes), \`lead_steering\` (a payment settled a customer ` +
  "whose only leads were provisional, keyless ones). A sale carries its customer's lead codes and its own; a " +
  "commission carries its sale's.";
