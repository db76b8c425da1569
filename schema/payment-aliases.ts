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
 * Other ids of a recorded payment, beside the sale's `processor_event_id`. A subscription invoice of a
 * current provider API version carries no PaymentIntent, so its sale is keyed by the invoice id; the
 * PaymentIntent id (`pi_...`), which refunds, disputes and a brand's own sale call name, arrives with
 * `invoice_payment.paid` and is recorded here. `alias` is unique across the service, like
 * `processor_event_id`: the sale endpoint's duplicate check and the provider's reversals consult both.
 *
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
    alias: text("alias").notNull(),
    paymentId: text("payment_id").notNull(),
    saleId: bigint("sale_id", { mode: "number" }).references(() => saleEvents.id),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("payment_aliases_alias_unique").on(t.alias),
    index("payment_aliases_sale_idx").on(t.saleId),
    index("payment_aliases_unlinked_idx").on(t.paymentId).where(sql`${t.saleId} is null`),
  ],
);
