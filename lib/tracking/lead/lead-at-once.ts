import { customers } from "../../../schema/customers.ts";
import { leadEvents } from "../../../schema/events.ts";
import type { Database } from "../../db/client.ts";
import { fromDriver, fromDriverOrNull } from "../../db/columns.ts";
import { isRefusedAndKeptNothing, pgErrorOf } from "../../db/errors.ts";
import type { Sending } from "../../db/group-committed-statement.ts";
import { groupCommittedWrite } from "../../db/group-committed-write.ts";
import { keptPlanProcedure, type ProcedureValues } from "../../db/kept-plan-procedure.ts";
import type { DeviceHashes } from "../../fraud/device-hash.ts";
import type { Logger } from "../../log.ts";
import { provisionalLeadsSettle } from "../settle-provisional-leads.ts";
import { decideLead, type LeadDecision, type LeadFacts, type LeadIntent } from "./decide-lead.ts";
import {
  type LeadRow,
  leadCustomerWrites,
  leadEventInserts,
  leadFactsFromRow,
  leadFactsStatement,
  provisionalLeadEventInsert,
} from "./lead-store.ts";

/**
 * The lead decided and written in ONE round trip, for the common lead: a live lead naming its click, from the
 * brand's server with a live key (settled) or from the browser (provisional under `server_required`, settled
 * otherwise), of a customer nobody has signed up yet. The function reads the facts as the lead's read does
 * (`read_lead_facts`), applies the rules of `decideLead` such a lead meets, and writes it as the lead's writes
 * do (`write_lead`'s and `write_provisional_lead`'s steps, each its kept-plan function). Anything else (a
 * refusal, a test lead, a lead naming only its `customer_key`) it leaves alone and answers the facts it read,
 * which the route then decides in TypeScript and writes as before: no round trip more than before, one fewer
 * for the common lead.
 *
 * Why: as for the sale (`sale-at-once.ts`), a lead was two round trips, the read and then the write, each
 * waiting for its batch of the isolate's group commit. The TypeScript stays the rules' source: the route decides
 * again on the facts the function answers with and refuses the request if its decision is not the one written
 * (`lead-at-once.test.ts` compares the two on every rule).
 */
const NAMES = [
  "key_hash",
  "click_id",
  "customer_key",
  "explicit_program_id",
  "requested_program_id",
  "email_hash",
  "email_masked",
  "event_name",
  "ip_hash",
  "ua_hash",
  "now_at",
] as const;

/** The lead event's values (the order of the insert functions' parameters) as the procedure has them. */
const eventValues = (kind: "provisional" | "settled") =>
  [
    "program_id",
    "partner_id",
    "lead_click_id",
    "customer_key",
    "email_hash",
    "email_masked",
    "event_name",
    kind === "provisional" ? "true" : "false",
    kind === "provisional" ? "NULL" : "now_at",
    "key_hash IS NOT NULL",
    "ip_hash",
    "ua_hash",
    "false",
    "now_at",
  ].join(", ");

/** A timestamp of the facts (JSON) at the millisecond precision the rules read it with. */
const ms = (json: string) => `date_trunc('milliseconds', (${json})::timestamptz)`;

export const leadAtOnce = keptPlanProcedure({
  functionName: "record_lead_at_once",
  names: NAMES,
  types: {
    key_hash: "text",
    click_id: "text",
    customer_key: "text",
    explicit_program_id: "integer",
    requested_program_id: "integer",
    email_hash: "text",
    email_masked: "text",
    event_name: "text",
    ip_hash: "text",
    ua_hash: "text",
    now_at: "timestamp with time zone",
  },
  returns: [
    ["lead_written", "text"],
    ["lead_event_id", "bigint"],
    // What the write named, for the route's check against the rules' decision.
    ["lead_partner_id", "integer"],
    ["lead_click_id", "text"],
    ["promoted_customer_id", "bigint"],
    ...leadFactsStatement.resultColumns.map(([name, type]) => [`facts_${name}`, type] as const),
  ],
  declare: `  facts record;
  customer json;
  key_program_id integer;
  program_id integer;
  partner_id integer;
  lead_auth_policy text;
  written record;
`,
  runsFirst: [
    {
      statement: leadFactsStatement,
      values: ["key_hash", "click_id", "customer_key", "explicit_program_id"],
    },
  ],
  body: `  SELECT * INTO facts FROM ${leadFactsStatement.functionName}(key_hash, click_id, customer_key, explicit_program_id);
  facts_api_key := facts.api_key;
  facts_click := facts.click;
  facts_customer_by_click := facts.customer_by_click;
  facts_customer_by_key := facts.customer_by_key;
  facts_programs := facts.programs;
  <<decided>>
  BEGIN
    -- With a key (the brand's server): live, and not retired (one marked for rotation still counts).
    IF key_hash IS NOT NULL THEN
      IF facts.api_key IS NULL OR (facts.api_key->>'is_test')::boolean THEN EXIT decided; END IF;
      IF ${ms("facts.api_key->>'rotate_by'")} <= now_at THEN EXIT decided; END IF;
      key_program_id := (facts.api_key->>'program_id')::integer;
    END IF;
    -- The click: live, of the key's program (or, from the browser, of the program_id sent).
    IF click_id IS NULL OR facts.click IS NULL OR (facts.click->>'is_test')::boolean THEN EXIT decided; END IF;
    program_id := (facts.click->>'program_id')::integer;
    IF program_id <> key_program_id THEN EXIT decided; END IF;
    IF key_hash IS NULL AND program_id <> requested_program_id THEN EXIT decided; END IF;
    -- The customer of the click: none yet, or one nobody has signed up; no other customer holds the key.
    customer := facts.customer_by_click;
    IF customer->>'status' <> 'clicked' THEN EXIT decided; END IF;
    IF customer_key IS NOT NULL AND facts.customer_by_key IS NOT NULL
       AND (customer IS NULL OR facts.customer_by_key->>'id' <> customer->>'id') THEN EXIT decided; END IF;
    SELECT program->>'lead_auth_policy' INTO lead_auth_policy
    FROM json_array_elements(facts.programs) AS programs(program)
    WHERE (program->>'id')::integer = program_id;
    IF lead_auth_policy IS NULL THEN EXIT decided; END IF;
    -- A customer keeps the partner it was bound to; a new one gets the original click's (first click).
    partner_id := coalesce((customer->>'partner_id')::integer, (facts.click->>'partner_id')::integer);
    lead_click_id := facts.click->>'click_id';

    IF key_hash IS NULL AND lead_auth_policy = 'server_required' THEN
      SELECT * INTO written FROM ${provisionalLeadEventInsert.functionName}(${eventValues("provisional")},
        program_id, lead_click_id, customer_key);
      lead_written := 'provisional';
    ELSIF customer IS NULL THEN
      PERFORM ${leadCustomerWrites.create.functionName}(program_id, partner_id, lead_click_id,
        ${ms("facts.click->>'clicked_at'")}, customer_key, email_hash, email_masked, now_at);
      PERFORM ${provisionalLeadsSettle.functionName}(program_id, lead_click_id, now_at, NULL, program_id, lead_click_id);
      SELECT * INTO written FROM ${leadEventInserts.created.functionName}(${eventValues("settled")},
        program_id, lead_click_id);
      lead_written := 'settled';
    ELSE
      promoted_customer_id := (customer->>'id')::bigint;
      PERFORM ${leadCustomerWrites.promote.functionName}((customer->>'id')::bigint, customer_key, email_hash,
        email_masked, now_at);
      PERFORM ${provisionalLeadsSettle.functionName}(program_id, lead_click_id, now_at, (customer->>'id')::bigint,
        NULL, NULL);
      SELECT * INTO written FROM ${leadEventInserts.existing.functionName}(${eventValues("settled")},
        (customer->>'id')::bigint);
      lead_written := 'settled';
    END IF;
    lead_event_id := written.id;
    lead_partner_id := partner_id;
  END;
  RETURN NEXT;
`,
});

type LeadAtOnceRow = {
  lead_written: "provisional" | "settled" | null;
  lead_event_id: unknown;
  lead_partner_id: number | null;
  lead_click_id: string | null;
  promoted_customer_id: unknown;
} & { [Column in keyof LeadRow as `facts_${Column}`]: LeadRow[Column] };

/**
 * The procedure through the isolate's group commit: leads arriving together go as one call of
 * `record_leads_at_once`, each in a subtransaction of its own. A lead locks only its own customer and its
 * click's provisional leads: any order will do, as for `write_leads`.
 */
export const leadAtOnceSent = groupCommittedWrite<typeof leadAtOnce, LeadAtOnceRow>({
  functionName: "record_leads_at_once",
  sequence: leadAtOnce,
  what: "the lead decided and written at once",
});

/**
 * Whether the database may decide the lead: a live lead naming its click (a test lead, or one naming only its
 * `customer_key`, is the rules' alone).
 */
export function leadMayBeDecidedAtOnce(intent: LeadIntent): boolean {
  return !intent.testMode && intent.clickId !== null && intent.header.kind !== "malformed";
}

/** The procedure's values for a lead. */
export function leadAtOnceValues(input: {
  intent: LeadIntent;
  keyHash: string | null;
  device: DeviceHashes | null;
}): ProcedureValues<typeof NAMES> {
  const { intent } = input;
  return {
    key_hash: input.keyHash,
    click_id: intent.clickId,
    customer_key: intent.customerKey,
    explicit_program_id: intent.eventProgramId ?? intent.requestedProgramId,
    requested_program_id: intent.requestedProgramId,
    email_hash: intent.email?.hash ?? null,
    email_masked: intent.email?.masked ?? null,
    event_name: intent.eventName,
    ip_hash: input.device?.ipHash ?? null,
    ua_hash: input.device?.uaHash ?? null,
    now_at: intent.now.toISOString(),
  };
}

/**
 * The lead decided and written by the database in one round trip: the decision, which the rules make again on
 * the facts the database read and which must be the one it wrote, and the event's id; or, when the database
 * left the lead to the rules, the facts it read. Unset: the database refused the write (a guard or a unique
 * index that found the customer changed, a value refused): the lead is then read, decided and written the
 * usual way, whose conflict retry says what the answer is. A lost answer fails as the usual write's would.
 */
export async function leadDecidedAtOnce(
  db: Database,
  input: Parameters<typeof leadAtOnceValues>[0],
  log: Logger,
  /** Told the rules' decision of a lead the database wrote, before any answer (the key's notice, CORS). */
  onWritten: (decision: LeadDecision) => void,
  sending?: Sending,
): Promise<{ decision: LeadWritten; leadEventId: number } | { facts: LeadFacts } | undefined> {
  let row: LeadAtOnceRow;
  try {
    row = await leadAtOnceSent.send(db, leadAtOnceValues(input), 0, sending);
  } catch (error) {
    if (!isRefusedAndKeptNothing(error)) throw error;
    log.warn("the lead decided at once was refused by the database; decided anew", {
      pg_code: pgErrorOf(error)?.code,
    });
    return undefined;
  }
  const facts = leadFactsFromRow({
    api_key: row.facts_api_key,
    click: row.facts_click,
    customer_by_click: row.facts_customer_by_click,
    customer_by_key: row.facts_customer_by_key,
    programs: row.facts_programs,
  });
  if (row.lead_written === null) return { facts };
  const decision = decideLead(input.intent, facts);
  onWritten(decision);
  const leadEventId = fromDriver(leadEvents.id, row.lead_event_id);
  if (!writtenAsDecided(decision, row, input.keyHash !== null)) {
    // Never expected (`lead-at-once.test.ts`): the rules in the database and in TypeScript disagree. The lead
    // is written; the request fails rather than answer what was not written.
    log.error("the database decided the lead otherwise than the rules", undefined, {
      lead_event_id: leadEventId,
      outcome: decision.outcome,
      lead_written: row.lead_written,
    });
    throw new Error("lead decided otherwise in the database");
  }
  return { decision, leadEventId };
}

/** A lead the database wrote: its decision is the rules' provisional or settled one. */
type LeadWritten = Extract<LeadDecision, { outcome: "provisional" | "settled" }>;

/** Whether the database wrote what the rules decided: the outcome, and the partner, click and customer it names. */
function writtenAsDecided(
  decision: LeadDecision,
  row: LeadAtOnceRow,
  withKey: boolean,
): decision is LeadWritten {
  if (decision.outcome !== "provisional" && decision.outcome !== "settled") return false;
  if (decision.outcome !== row.lead_written) return false;
  const event = decision.write.leadEvent;
  const promoted = fromDriverOrNull(customers.id, row.promoted_customer_id);
  const customer = decision.write.kind === "settle" ? decision.write.customer : null;
  return (
    event.partnerId === row.lead_partner_id &&
    event.clickId === row.lead_click_id &&
    event.viaApiKey === withKey &&
    (customer?.kind === "promote" ? customer.customerId : null) === promoted
  );
}
