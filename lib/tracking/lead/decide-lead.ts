import type { CustomerStatus } from "../../../schema/customers.ts";
import type { LeadAuthPolicy } from "../../../schema/programs.ts";
import type { BearerHeader } from "../../auth/bearer.ts";
import { type ApiKeyRecord, checkApiKey, type KeyRefusal, type KeyRotation } from "../../auth/program-key.ts";
import type { StoredEmail } from "../email.ts";

/** What the request asks for, already shaped (empty strings are absent). */
export interface LeadIntent {
  header: BearerHeader;
  clickId: string | null;
  customerKey: string | null;
  email: StoredEmail | null;
  /** Top-level `program_id`: read only in browser mode (and, in test mode, to name the program). */
  requestedProgramId: number | null;
  /** `additional_data.program_id`. */
  eventProgramId: number | null;
  /** `additional_data.test_mode`. A test API key makes a test lead too. */
  testMode: boolean;
  eventName: string | null;
  now: Date;
}

export interface LeadCustomerFact {
  id: number;
  status: CustomerStatus;
  partnerId: number | null;
  clickId: string | null;
}

/** What one database read told us (see `lead-store.ts`). */
export interface LeadFacts {
  /** The Bearer key's record, when the token matched a key that is not revoked. */
  apiKey: ApiKeyRecord | null;
  /**
   * The click sent, resolved to the visitor's ORIGINAL click (first click): when the row sent records a
   * `visitor_click_id`, id, partner and time are the original click's; program and test flag are the same.
   */
  click: { clickId: string; programId: number; partnerId: number; clickedAt: Date; isTest: boolean } | null;
  /** The programs of the key, the click and the explicit program id, those that exist. */
  programs: Array<{ id: number; leadAuthPolicy: LeadAuthPolicy; allowedOrigins: string[] }>;
  /** The customer of the resolved click in the click's program. */
  customerByClick: LeadCustomerFact | null;
  /** The customer holding `customer_key` in the key's program (else the click's). */
  customerByKey: LeadCustomerFact | null;
}

/** One row of `affiliate_lead_events`. */
export interface LeadEventRow {
  programId: number;
  partnerId: number | null;
  clickId: string | null;
  customerKey: string | null;
  email: StoredEmail | null;
  eventName: string | null;
  provisional: boolean;
  settledAt: Date | null;
  viaApiKey: boolean;
  isTest: boolean;
  createdAt: Date;
}

export type CustomerWrite =
  /** The first settled lead of this click: one customer per (program, click); unique constraints guard it. */
  | {
      kind: "create";
      programId: number;
      partnerId: number;
      clickId: string;
      clickedAt: Date;
      customerKey: string | null;
      email: StoredEmail | null;
      signedUpAt: Date;
    }
  /** A customer row that exists in status `clicked`: moved to `lead`, guarded on that status. */
  | {
      kind: "promote";
      customerId: number;
      customerKey: string | null;
      email: StoredEmail | null;
      signedUpAt: Date;
    };

export type LeadWrite =
  | { kind: "test"; leadEvent: LeadEventRow }
  | {
      kind: "provisional";
      leadEvent: LeadEventRow;
      /** Guard: no customer of this click or key reached `lead` since the read. */
      unchanged: { programId: number; clickId: string; customerKey: string | null };
    }
  | {
      kind: "settle";
      leadEvent: LeadEventRow;
      customer: CustomerWrite;
      /** Earlier provisional leads of this click are marked settled in the same transaction. */
      settleProvisionalOf: { programId: number; clickId: string } | null;
    };

export type LeadBody =
  | { success: true; message: string }
  | { success: true; provisional: true; message: string };

interface DecisionContext {
  /** Set when a valid key marked for rotation authenticated the call (warnings and headers). */
  rotation: KeyRotation | null;
  /** The allowed origins of the program the lead resolved to, for the CORS answer. */
  allowedOrigins: string[] | undefined;
}

export type LeadDecision = DecisionContext &
  (
    | { outcome: "refused"; refusal: LeadRefusal }
    | { outcome: "test"; write: LeadWrite & { kind: "test" }; programId: number }
    | { outcome: "provisional" | "settled"; write: LeadWrite; body: LeadBody }
  );

/**
 * Why a lead is refused, in the order the rules check them; the lead endpoint words each in
 * `lead-outcome-http.ts` (a malformed Authorization header is the key's `missing`).
 */
export type LeadRefusal =
  | { reason: "key"; refusal: KeyRefusal }
  | { reason: "identifier_required" }
  | { reason: "click_id_required" }
  | { reason: "program_mismatch" }
  | { reason: "unknown_program" }
  | { reason: "test_program_required" }
  | { reason: "customer_not_found" }
  | { reason: "other_program" }
  | { reason: "status_cannot_become_lead"; status: CustomerStatus };

export const leadMessages = {
  identifierRequired: "click_id or customer_key is required",
  clickIdRequired: "click_id is required when no API key is sent",
  customerNotFound: "Customer not found. Provide a valid click_id or customer_key.",
  otherProgram: "Customer does not belong to this program",
  keyProgramMismatch: "program_id does not match the API key",
  unknownProgram: "Unknown program_id",
  testProgramRequired: "program_id is required in test mode without an API key",
  settled: "Lead recorded",
  provisional: "Lead recorded as provisional; confirm it from your server with the program API key.",
  test: "Test lead recorded",
} as const;

function statusCannotBecomeLead(status: CustomerStatus): LeadRefusal {
  return { reason: "status_cannot_become_lead", status };
}

/** Only a customer nobody has signed up yet can become a lead. */
function canBecomeLead(status: CustomerStatus): boolean {
  return status === "clicked";
}

function identifierRule(intent: LeadIntent, testMode: boolean, withKey: boolean): LeadRefusal | null {
  if (!testMode && intent.clickId === null && intent.customerKey === null) {
    return { reason: "identifier_required" };
  }
  if (!withKey && intent.customerKey !== null && intent.clickId === null) {
    return { reason: "click_id_required" };
  }
  return null;
}

/**
 * The checks that need no database: a malformed Authorization header, and in browser mode the two
 * identifier rules. The route runs them before reading, so such a request costs no round trip. With a
 * token the rules wait for the key (a test key makes a test lead, where `click_id` is optional).
 */
export function precheckLead(intent: LeadIntent): LeadRefusal | null {
  if (intent.header.kind === "malformed") return { reason: "key", refusal: "missing" };
  if (intent.header.kind === "token") return null;
  return identifierRule(intent, intent.testMode, false);
}

/**
 * The lead rules (spec sections 2, 3, 4 and 7), in the order the errors are checked:
 * header shape, key (401), identifier rules, then test mode (403, program) or the customer (400s), then
 * the lead auth policy. Returns the rows to write in one transaction and the response body.
 */
export function decideLead(intent: LeadIntent, facts: LeadFacts): LeadDecision {
  const early = precheckLead(intent);
  if (early) return { outcome: "refused", refusal: early, rotation: null, allowedOrigins: undefined };

  let key: { programId: number; isTest: boolean } | null = null;
  let rotation: KeyRotation | null = null;
  if (intent.header.kind === "token") {
    const verdict = checkApiKey(intent.header, facts.apiKey, intent.now);
    if (!verdict.ok) {
      const refusal: LeadRefusal = { reason: "key", refusal: verdict.refusal };
      return { outcome: "refused", refusal, rotation: null, allowedOrigins: undefined };
    }
    key = { programId: verdict.programId, isTest: verdict.isTest };
    rotation = verdict.rotation;
  }
  const programOf = (id: number | null) =>
    id === null ? undefined : facts.programs.find((program) => program.id === id);
  let allowedOrigins = programOf(key?.programId ?? null)?.allowedOrigins;
  const refuse = (refusal: LeadRefusal): LeadDecision => ({
    outcome: "refused",
    refusal,
    rotation,
    allowedOrigins,
  });

  const testMode = intent.testMode || key?.isTest === true;
  const ruleError = identifierRule(intent, testMode, key !== null);
  if (ruleError) return refuse(ruleError);

  if (testMode) {
    if (key && intent.eventProgramId !== null && intent.eventProgramId !== key.programId) {
      return refuse({ reason: "program_mismatch" });
    }
    const explicitProgramId = intent.eventProgramId ?? intent.requestedProgramId;
    const programId = key?.programId ?? explicitProgramId ?? facts.click?.programId ?? null;
    const program = programOf(programId);
    if (!program || programId === null) {
      if (key) throw new Error(`program ${key.programId} of an API key was not read`);
      return refuse({ reason: explicitProgramId !== null ? "unknown_program" : "test_program_required" });
    }
    allowedOrigins = program.allowedOrigins;
    const click = facts.click?.programId === programId ? facts.click : null;
    return {
      outcome: "test",
      programId,
      rotation,
      allowedOrigins,
      write: {
        kind: "test",
        leadEvent: {
          programId,
          partnerId: click?.partnerId ?? null,
          clickId: click?.clickId ?? intent.clickId,
          customerKey: intent.customerKey,
          email: intent.email,
          eventName: intent.eventName,
          provisional: false,
          settledAt: null,
          viaApiKey: key !== null,
          isTest: true,
          createdAt: intent.now,
        },
      },
    };
  }

  // Live lead: find the customer (or the click a new customer will come from).
  const liveClick = facts.click && !facts.click.isTest ? facts.click : null;
  let customer: LeadCustomerFact | null;
  let programId: number;
  if (intent.clickId !== null) {
    if (!liveClick) return refuse({ reason: "customer_not_found" });
    if (key && liveClick.programId !== key.programId) return refuse({ reason: "other_program" });
    if (!key && intent.requestedProgramId !== null && intent.requestedProgramId !== liveClick.programId) {
      return refuse({ reason: "customer_not_found" });
    }
    programId = liveClick.programId;
    customer = facts.customerByClick;
  } else {
    // Only a key reaches here (identifier rules): the key is saved only when a lead settles.
    if (!key || !facts.customerByKey) return refuse({ reason: "customer_not_found" });
    programId = key.programId;
    customer = facts.customerByKey;
  }
  const program = programOf(programId);
  if (!program) throw new Error(`program ${programId} of a click or key was not read`);
  allowedOrigins = program.allowedOrigins;

  if (customer && !canBecomeLead(customer.status)) return refuse(statusCannotBecomeLead(customer.status));
  const keyHolder = facts.customerByKey;
  if (intent.customerKey !== null && keyHolder && keyHolder.id !== customer?.id) {
    return refuse(statusCannotBecomeLead(keyHolder.status));
  }

  const clickId = liveClick?.clickId ?? customer?.clickId ?? null;
  const leadEvent: LeadEventRow = {
    programId,
    // A customer keeps the partner it was bound to; a new one gets the original click's (first click).
    partnerId: customer?.partnerId ?? liveClick?.partnerId ?? null,
    clickId,
    customerKey: intent.customerKey,
    email: intent.email,
    eventName: intent.eventName,
    provisional: false,
    settledAt: intent.now,
    viaApiKey: key !== null,
    isTest: false,
    createdAt: intent.now,
  };

  if (!key && program.leadAuthPolicy === "server_required" && liveClick) {
    return {
      outcome: "provisional",
      rotation,
      allowedOrigins,
      body: { success: true, provisional: true, message: leadMessages.provisional },
      write: {
        kind: "provisional",
        leadEvent: { ...leadEvent, provisional: true, settledAt: null },
        unchanged: { programId, clickId: liveClick.clickId, customerKey: intent.customerKey },
      },
    };
  }

  let customerWrite: CustomerWrite;
  if (customer) {
    customerWrite = {
      kind: "promote",
      customerId: customer.id,
      customerKey: intent.customerKey,
      email: intent.email,
      signedUpAt: intent.now,
    };
  } else if (liveClick) {
    customerWrite = {
      kind: "create",
      programId,
      partnerId: liveClick.partnerId,
      clickId: liveClick.clickId,
      clickedAt: liveClick.clickedAt,
      customerKey: intent.customerKey,
      email: intent.email,
      signedUpAt: intent.now,
    };
  } else {
    throw new Error("a settled lead without a customer or a click");
  }
  return {
    outcome: "settled",
    rotation,
    allowedOrigins,
    body: { success: true, message: leadMessages.settled },
    write: {
      kind: "settle",
      leadEvent,
      customer: customerWrite,
      settleProvisionalOf: clickId === null ? null : { programId, clickId },
    },
  };
}

export function testLeadBody(eventId: number, programId: number) {
  return {
    success: true as const,
    message: leadMessages.test,
    data: { eventId, programId, test_mode: true as const },
  };
}
