import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { saleEvents } from "./events.ts";
import { programs } from "./programs.ts";

/**
 * Every id a payment is known by, in one unique index on (namespace, alias): each sale's own
 * `processor_event_id` (`alias` = `payment_id`, written in the sale's transaction) and the provider's other
 * ids of the payment. A subscription invoice of a current provider API version carries no PaymentIntent, so
 * its sale is keyed by the invoice id; the PaymentIntent id (`pi_...`), which refunds, disputes and a
 * brand's own sale call name, arrives with `invoice_payment.paid` and is recorded here; a one-time
 * checkout's sale is keyed by its PaymentIntent and its Checkout Session id (`cs_...`) is recorded here.
 *
 * `namespace`: `live`, or `test:<program id>` for a test sale's ids (a test sale never uses up a live id).
 * `payment_id` is the id the alias is another name of (the invoice id). `sale_id` is null while that
 * payment is not recorded yet (the `invoice_payment.paid` event came first); the sale's write fills it.
 */
export const paymentAliases = pgTable(
  "payment_aliases",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    namespace: text("namespace").notNull().default("live"),
    alias: text("alias").notNull(),
    paymentId: text("payment_id").notNull(),
    saleId: bigint("sale_id", { mode: "number" }).references(() => saleEvents.id),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("payment_aliases_namespace_alias_unique").on(t.namespace, t.alias),
    index("payment_aliases_namespace_payment_idx").on(t.namespace, t.paymentId),
    // Linked ids only: an index that can find the unlinked rows (`sale_id is null`) was what a sale's link
    // walked, whole, in the kept plan PostgreSQL made once few rows were unlinked; the unlinked ids of a payment
    // are found by (namespace, payment_id) (migration 0046).
    index("payment_aliases_sale_idx").on(t.saleId).where(sql`${t.saleId} is not null`),
  ],
);
