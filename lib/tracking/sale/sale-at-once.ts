import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { commissions } from "../../../schema/commissions.ts";
import { customers } from "../../../schema/customers.ts";
import { clickEvents, saleEvents } from "../../../schema/events.ts";
import type { Database } from "../../db/client.ts";
import { fromDriver, fromDriverOrNull } from "../../db/columns.ts";
import type { Sending } from "../../db/group-committed-statement.ts";
import { groupCommittedWrite } from "../../db/group-committed-write.ts";
import { keptPlanStatement } from "../../db/kept-plan.ts";
import { keptPlanProcedure, type ProcedureValues } from "../../db/kept-plan-procedure.ts";
import { wellFormedJson } from "../../db/well-formed-json.ts";
import { type Currency, currencyExponents } from "../../money.ts";
import { liveNamespace } from "../../sales/payment-namespace.ts";
import type { SaleFacts } from "./decide-sale.ts";
import type { SaleRequest } from "./sale-request.ts";
import {
  customerWrites,
  keyProgram,
  SALE_VALUES,
  type SaleFactsRow,
  saleCommissionCredit,
  saleCommissionInsert,
  saleFactsFromRow,
  saleFactsStatement,
  saleInserts,
  saleLinkAndFinish,
} from "./sale-store.ts";

/**
 * The sale decided and written in ONE round trip, for the common sale: a live sale with its `transaction_id`
 * and amount, attributed to a member partner within the window, whose commission (if any) is the program's
 * or its product rule's one-time or lifetime terms. The function reads the facts as the sale's read does
 * (`read_sale_facts`), applies the rules of `decideSale` that such a sale meets, and writes it as the sale's
 * write does (`write_sale`'s steps, each its kept-plan function). Any other case (a refusal, a duplicate, a
 * test sale, a customer without a partner, a recurring period that may have ended) it leaves alone and
 * answers the facts it read, which the route then decides in TypeScript and writes as before: no round trip
 * more than before, one fewer for the common sale.
 *
 * Why: a sale was two round trips, the read and then the write, each waiting for its batch of the isolate's
 * group commit (README, Benchmarks): held by those two waits, not by CPU. The rules the database applies here
 * are a subset of `decideSale`'s, and the TypeScript stays their source: the route decides again on the facts
 * the function answers with and refuses the request if its decision is not the one written
 * (`sale-at-once.test.ts` compares the two on every rule and every commission type).
 */
const NAMES = [
  "key_hash",
  "transaction_id",
  "customer_key",
  "click_id",
  "product_id",
  "amount_cents",
  "tax_cents",
  "currency",
  "currency_exponent",
  "sale_type",
  "line_items",
  "is_recurring",
  "subscription_id",
  "subscription_interval",
  "occurred_at",
  "provider",
  "provider_payment_id",
  "livemode",
  "now_at",
] as const;

/** The sale row's values (`SALE_VALUES`, the order of the insert functions' parameters) as the procedure has them. */
const saleValue: Record<(typeof SALE_VALUES)[number], string> = {
  processorEventId: "transaction_id",
  programId: "program_id",
  partnerId: "partner_id",
  amountCents: "amount_cents",
  taxCents: "tax_cents",
  currency: "currency",
  saleType: "sale_type",
  lineItems: "line_items",
  isRecurring: "is_recurring",
  subscriptionId: "subscription_id",
  subscriptionInterval: "subscription_interval",
  productId: "product_id",
  occurredAt: "occurred_at",
  provider: "provider",
  providerPaymentId: "provider_payment_id",
  livemode: "livemode",
  source: "'api'",
  needsCommission: "false",
  isTest: "false",
  now: "now_at",
};
const saleValues = SALE_VALUES.map((name) => saleValue[name]).join(", ");
const live = `'${liveNamespace}'`;
/** A timestamp of the facts (JSON) at the millisecond precision the rules read it with. */
const ms = (json: string) => `date_trunc('milliseconds', (${json})::timestamptz)`;

export const saleAtOnce = keptPlanProcedure({
  functionName: "record_sale_at_once",
  names: NAMES,
  types: {
    key_hash: "text",
    transaction_id: "text",
    customer_key: "text",
    click_id: "text",
    product_id: "text",
    amount_cents: "bigint",
    tax_cents: "bigint",
    currency: "text",
    currency_exponent: "integer",
    sale_type: "text",
    line_items: "jsonb",
    is_recurring: "boolean",
    subscription_id: "text",
    subscription_interval: "text",
    occurred_at: "timestamp with time zone",
    provider: "text",
    provider_payment_id: "text",
    livemode: "boolean",
    now_at: "timestamp with time zone",
  },
  returns: [
    ["sale_written", "boolean"],
    ["sale_id", "bigint"],
    ["commission_id", "bigint"],
    ["commission_cents", "bigint"],
    ...saleFactsStatement.resultColumns.map(([name, type]) => [`facts_${name}`, type] as const),
  ],
  declare: `  facts record;
  customer json;
  program_id integer;
  partner_id integer;
  clicked_at timestamptz;
  policy_type text;
  policy_rate numeric;
  policy_duration integer;
  eligible boolean;
  rate numeric;
  cents numeric;
  hold_days integer;
  finished record;
`,
  runsFirst: [
    {
      statement: saleFactsStatement,
      values: ["key_hash", "transaction_id", "customer_key", "click_id", "product_id"],
    },
  ],
  body: `  SELECT * INTO facts FROM ${saleFactsStatement.functionName}(key_hash, transaction_id, customer_key, click_id, product_id);
  facts_key := facts.key;
  facts_program := facts.program;
  facts_recorded_sales := facts.recorded_sales;
  facts_customer_by_key := facts.customer_by_key;
  facts_click := facts.click;
  sale_written := false;
  <<decided>>
  BEGIN
    -- The key: live, and not retired (one marked for rotation still pays).
    IF facts.key IS NULL OR facts.program IS NULL OR (facts.key->>'is_test')::boolean THEN EXIT decided; END IF;
    IF ${ms("facts.key->>'rotate_by'")} <= now_at THEN EXIT decided; END IF;
    program_id := (facts.program->>'id')::integer;
    -- Not recorded yet (the 409 names the recorded sale: decided in TypeScript).
    IF EXISTS (SELECT 1 FROM json_array_elements(facts.recorded_sales) AS recorded(sale)
               WHERE recorded.sale->>'id_namespace' = ${live}) THEN EXIT decided; END IF;
    -- The customer: by customer_key, else the click's (its original click's) customer, else a new one.
    IF facts.customer_by_key IS NOT NULL THEN
      customer := facts.customer_by_key;
    ELSE
      IF facts.click IS NULL OR (facts.click->>'is_test')::boolean
         OR (facts.click->>'program_id')::integer <> program_id THEN EXIT decided; END IF;
      IF json_typeof(facts.click->'customer') = 'object' THEN customer := facts.click->'customer'; END IF;
    END IF;
    IF customer IS NOT NULL THEN
      partner_id := (customer->>'partner_id')::integer;
      clicked_at := ${ms("customer->>'clicked_at'")};
      IF partner_id IS NULL OR NOT (customer->>'partner_is_member')::boolean THEN EXIT decided; END IF;
    ELSE
      partner_id := (facts.click->>'partner_id')::integer;
      clicked_at := ${ms("facts.click->>'created_at'")};
      IF partner_id IS NULL OR NOT (facts.click->>'partner_is_member')::boolean THEN EXIT decided; END IF;
    END IF;
    -- Until the first conversion the click must be within the window of the signup, or of this payment.
    IF customer->>'first_converted_at' IS NULL AND clicked_at IS NOT NULL
       AND extract(epoch FROM coalesce(${ms("customer->>'signed_up_at'")}, now_at)) - extract(epoch FROM clicked_at)
           > (facts.program->>'attribution_window_days')::integer * 86400 THEN EXIT decided; END IF;
    -- The terms: the product's rule, else the program's (a rule without a duration takes the program's).
    IF facts.program->>'rule_id' IS NOT NULL THEN
      policy_type := facts.program->>'rule_type';
      policy_rate := (facts.program->>'rule_rate')::numeric;
      policy_duration := coalesce((facts.program->>'rule_duration')::integer, (facts.program->>'duration_months')::integer);
    ELSE
      policy_type := facts.program->>'commission_type';
      policy_rate := (facts.program->>'commission_rate')::numeric;
      policy_duration := (facts.program->>'duration_months')::integer;
    END IF;
    -- One-time terms pay the first commissioned sale only; recurring ones for life here (a period that may
    -- have ended is decided in TypeScript).
    IF customer->>'first_commission_at' IS NULL THEN
      eligible := true;
    ELSIF policy_type NOT IN ('recurring_percent', 'recurring_fixed') THEN
      eligible := false;
    ELSIF policy_duration = 0 THEN
      eligible := true;
    ELSE
      EXIT decided;
    END IF;
    IF eligible THEN
      -- commissionAmount: the rate in ten-thousandths, rounded half up to the minor unit.
      rate := trunc(policy_rate * 10000);
      IF policy_type IN ('percent', 'recurring_percent') THEN
        cents := div(amount_cents * rate * 2 + 1000000, 2000000);
      ELSE
        cents := div(rate * (10::numeric ^ currency_exponent) * 2 + 10000, 20000);
      END IF;
      IF cents > 9007199254740991 THEN EXIT decided; END IF;
      commission_cents := cents;
    END IF;
    hold_days := (facts.program->>'hold_days')::integer;

    IF customer IS NULL THEN
      PERFORM ${customerWrites.create.functionName}(program_id, partner_id, facts.click->>'click_id', clicked_at, NULL, NULL,
        NULL, NULL, NULL, CASE WHEN eligible THEN now_at END, now_at);
      PERFORM ${saleInserts.create.functionName}(${saleValues}, program_id, facts.click->>'click_id');
    ELSE
      IF customer->>'first_converted_at' IS NULL OR customer->>'first_commission_at' IS NULL THEN
        PERFORM ${customerWrites.update.functionName}((customer->>'id')::bigint, ${ms("customer->>'first_commission_at'")},
          CASE WHEN eligible THEN now_at END, NULL, NULL, NULL, now_at);
      END IF;
      PERFORM ${saleInserts.update.functionName}(${saleValues}, (customer->>'id')::bigint);
    END IF;
    IF eligible THEN
      PERFORM ${saleCommissionInsert.functionName}(transaction_id, ${live}, commission_cents, currency,
        CASE WHEN hold_days > 0 THEN 'pending' ELSE 'approved' END,
        CASE WHEN hold_days > 0 THEN now_at + hold_days * interval '24 hours' END,
        CASE WHEN hold_days > 0 THEN NULL ELSE now_at END, now_at);
      IF hold_days <= 0 THEN PERFORM ${saleCommissionCredit.functionName}(transaction_id, ${live}, now_at); END IF;
    END IF;
    SELECT * INTO finished FROM ${saleLinkAndFinish.functionName}(transaction_id, ${live}, json_build_array(transaction_id), now_at);
    sale_id := finished.sale_id;
    commission_id := finished.commission_id;
    sale_written := true;
  END;
  RETURN NEXT;
`,
});

type SaleAtOnceRow = {
  sale_written: boolean;
  sale_id: unknown;
  commission_id: unknown;
  commission_cents: unknown;
} & { [Column in keyof SaleFactsRow as `facts_${Column}`]: SaleFactsRow[Column] };

const k = alias(clickEvents, "k");
const o = alias(clickEvents, "o");
const c = alias(customers, "c");

/**
 * The partner a sale decided at once would credit, as far as its key, `customer_key` and `click_id` tell (the
 * customer's, else the click's visitor's original click's): the order in which a batch of them runs, so that
 * it locks partners' balances in the order every write batch does (`write_sales` and `write_refunds` sort by
 * partner). Two batches taking two partners' balances in opposite orders deadlock: PostgreSQL ends it after
 * `deadlock_timeout` (1 s), rolling one item back. A guess that misses (a customer whose partner is not its
 * click's) costs only that order.
 */
export const saleLockOrder = keptPlanStatement({
  functionName: "sale_lock_order",
  names: ["keyHash", "customerKey", "clickId"],
  parameterTypes: { keyHash: "text", customerKey: "text", clickId: "text" },
  returns: [["partner_id", "integer"]],
  build: (q) => sql`
    select coalesce(
      (select ${c.partnerId} from ${customers} ${c}
       where ${c.customerKey} = ${q.customerKey}::text and ${c.programId} = ${keyProgram(q.keyHash)}),
      (select coalesce(${o.partnerId}, ${k.partnerId}) from ${clickEvents} ${k}
       left join ${clickEvents} ${o} on ${o.clickId} = ${k.visitorClickId}
       where ${k.clickId} = ${q.clickId}::text)) as partner_id`,
});

const valueAt = (item: string, name: (typeof NAMES)[number]) => `${item}->0->>${NAMES.indexOf(name)}`;

/**
 * The procedure through the isolate's group commit: sales arriving together go as one call of
 * `record_sales_at_once`, each in a subtransaction of its own (`kept-plan-write-batch.ts`), in the order of
 * the partners they would credit (`sale_lock_order`), which the worker does not know before the read.
 */
export const saleAtOnceSent = groupCommittedWrite<typeof saleAtOnce, SaleAtOnceRow>({
  functionName: "record_sales_at_once",
  sequence: saleAtOnce,
  what: "the sale decided and written at once",
  lockOrder: (item) =>
    `(SELECT guess.partner_id FROM ${saleLockOrder.functionName}(${valueAt(item, "key_hash")}, ` +
    `${valueAt(item, "customer_key")}, ${valueAt(item, "click_id")}) guess)`,
});

/** Whether the database may decide the sale: a live sale with its id and amount, in a supported currency. */
export interface SaleAtOnceInput {
  keyHash: string;
  body: SaleRequest & { transaction_id: string; amount_cents: number };
  currency: Currency;
  now: Date;
}

export interface SaleAtOnce {
  facts: SaleFacts;
  /** Set when the database decided and wrote the sale; unset: the facts are for `decideSale`. */
  written: { saleId: number; commissionId: number | null; commissionCents: number | null } | null;
}

/** The procedure's values for a sale. */
export function saleAtOnceValues(input: SaleAtOnceInput): ProcedureValues<typeof NAMES> {
  const { body, now } = input;
  return {
    key_hash: input.keyHash,
    transaction_id: body.transaction_id,
    customer_key: body.customer_key ?? null,
    click_id: body.click_id ?? null,
    product_id: body.product_id ?? null,
    amount_cents: body.amount_cents,
    tax_cents: body.tax_cents ?? null,
    currency: input.currency,
    currency_exponent: currencyExponents[input.currency],
    sale_type: body.sale_type ?? "payment",
    line_items: body.line_items == null ? null : wellFormedJson(body.line_items),
    is_recurring: body.is_recurring ?? false,
    subscription_id: body.subscription_id ?? null,
    subscription_interval: body.subscription_interval ?? null,
    occurred_at: body.occurred_at ? new Date(body.occurred_at).toISOString() : null,
    provider: body.provider ?? null,
    provider_payment_id: body.provider_payment_id ?? null,
    livemode: body.livemode ?? null,
    now_at: now.toISOString(),
  };
}

/** One round trip: the sale written, or the facts it was read with. */
export async function recordSaleAtOnce(
  db: Database,
  input: SaleAtOnceInput,
  sending?: Sending,
): Promise<SaleAtOnce> {
  const row = await saleAtOnceSent.send(db, saleAtOnceValues(input), 0, sending);
  const facts = saleFactsFromRow({
    key: row.facts_key,
    program: row.facts_program,
    recorded_sales: row.facts_recorded_sales,
    customer_by_key: row.facts_customer_by_key,
    click: row.facts_click,
  });
  return {
    facts,
    written:
      row.sale_written === true
        ? {
            saleId: fromDriver(saleEvents.id, row.sale_id),
            commissionId: fromDriverOrNull(commissions.id, row.commission_id),
            commissionCents: fromDriverOrNull(commissions.amountCents, row.commission_cents),
          }
        : null,
  };
}
