import type { BearerHeader } from "../auth/bearer.ts";
import type { Database } from "../db/client.ts";
import {
  isDeterministicDatabaseError,
  isGuardFailure,
  isRefusedAndKeptNothing,
  isUniqueViolation,
  pgErrorOf,
  withConflictRetry,
} from "../db/errors.ts";
import type { Sending } from "../db/group-committed-statement.ts";
import type { Logger } from "../log.ts";
import { isSupportedCurrency } from "../money.ts";
import { customerKeyInOtherProgramOfWorkspace } from "../tracking/sale/customer-key-in-workspace.ts";
import {
  decideSale,
  occurredAtInRange,
  type SaleDecision,
  type SaleFacts,
  saleCurrency,
  testByBody,
  testTransactionId,
} from "../tracking/sale/decide-sale.ts";
import { recordSaleAtOnce } from "../tracking/sale/sale-at-once.ts";
import type { SaleRequest } from "../tracking/sale/sale-request.ts";
import { readSaleFacts, writeSale } from "../tracking/sale/sale-store.ts";
import { saleIdConstraint } from "./payment-namespace.ts";

type Recorded = Extract<SaleDecision, { outcome: "record" }>;

export interface SaleWritten {
  saleId: number;
  commissionId: number | null;
  /** The sale is stored without its commission (flagged for the scheduled repair). */
  commissionFailed: boolean;
}

/**
 * Writes a decided sale with the commission fallback of spec section 4: when the database refuses the
 * batch and the sale and customer alone can be written, it was the commission part that failed, so the sale
 * is stored flagged (`needs_commission`, the scheduled repair creates the commission), its id consumed, and
 * `commissionFailed` is set: the sale endpoint answers 500 `Failed to create commission` (a retry gives 409);
 * the provider's events acknowledge the sale as recorded (a 500 would only make the provider resend an event
 * that is then a duplicate). Guard failures and the id's unique
 * index are re-thrown for `withConflictRetry`; transient failures (network, serialization) are re-thrown too
 * (`... tracking failed`, retryable).
 */
export async function writeSaleWithFallback(
  db: Database,
  decision: Recorded,
  now: Date,
  log: Logger,
  aliases: readonly string[] = [],
  /** How its write goes to the database (the isolate's group commit); unset: alone. */
  sending?: Sending,
): Promise<SaleWritten> {
  try {
    return { ...(await writeSale(db, decision, now, { aliases, sending })), commissionFailed: false };
  } catch (error) {
    if (isGuardFailure(error) || !decision.commission || !isDeterministicDatabaseError(error)) throw error;
    if (isUniqueViolation(error, saleIdConstraint)) throw error;
    log.error("commission write failed", error, { program_id: decision.programId });
    const written = await writeSale(db, decision, now, { withCommission: false, aliases });
    return { ...written, commissionFailed: true };
  }
}

/**
 * The sale endpoint's use case: read -> decide -> write under `withConflictRetry`. A concurrent writer of the
 * same id makes the write abort; the retry's read then sees the sale and the rules answer 409. Test-id rule:
 * a test sale sent without `transaction_id` gets `test_txn_<ms>`; when that id is taken (two in the same
 * millisecond) the next millisecond is used.
 */
export async function recordSale(
  db: Database,
  /** `docsUrl` is no longer read here (the route words refusals); kept so callers need not change. */
  input: {
    header: BearerHeader;
    keyHash: string | null;
    body: SaleRequest;
    now: Date;
    docsUrl?: string;
    /** How its read and its write go to the database (the isolate's group commit); unset: alone. */
    sending?: Sending;
    /**
     * False: read, decided and written the usual way even where the database could decide it at once (the
     * tests compare the two ways on the same sale). Default true.
     */
    atOnce?: boolean;
  },
  log: Logger,
  /** Told each decision before its write (the route sets the key's rotation notice from it). */
  onDecided: (decision: SaleDecision, keyFound: boolean) => void = () => {},
): Promise<{ decision: SaleDecision; written: SaleWritten | null }> {
  const { body, keyHash, header } = input;
  let now = input.now;
  const atOnce = await saleDecidedAtOnce(db, input, log, onDecided);
  if (atOnce && "decision" in atOnce) {
    onDecided(atOnce.decision, true);
    return atOnce;
  }
  // Left to the rules: decided on the facts the database read with it, not read again.
  let factsRead = atOnce?.facts;
  return withConflictRetry(
    async () => {
      for (;;) {
        const facts =
          factsRead ??
          (await readSaleFacts(
            db,
            {
              keyHash,
              transactionId: body.transaction_id ?? testTransactionId(now),
              customerKey: body.customer_key ?? null,
              clickId: body.click_id ?? null,
              productId: body.product_id ?? null,
            },
            input.sending,
          ));
        factsRead = undefined;
        let decision = decideSale({ header, body, now }, facts);
        if (
          decision.outcome === "refused" &&
          decision.refusal.reason === "customer_not_found" &&
          body.customer_key &&
          facts.key
        ) {
          const customerKeyInOtherProgram = await customerKeyInOtherProgramOfWorkspace(
            db,
            facts.key.programId,
            body.customer_key,
          );
          decision = decideSale({ header, body, now }, { ...facts, customerKeyInOtherProgram });
        }
        if (
          body.transaction_id == null &&
          decision.outcome === "refused" &&
          decision.refusal.reason === "duplicate_transaction"
        ) {
          now = new Date(now.getTime() + 1);
          continue;
        }
        onDecided(decision, facts.key !== null);
        if (decision.outcome !== "record") return { decision, written: null };
        return { decision, written: await writeSaleWithFallback(db, decision, now, log, [], input.sending) };
      }
    },
    { retryOnConstraints: [saleIdConstraint] },
  );
}

/**
 * The sale decided and written by the database in one round trip (`sale-at-once.ts`), when its body lets the
 * database decide it (a live sale with its id and amount, in a supported currency, `occurred_at` in range):
 * the decision, which the rules make again on the facts the database read and which must be the one it wrote,
 * and the ids; or, when the database left the sale to the rules, the facts it read. Unset: the body does not
 * let it, or the database refused the write (a guard or a unique index that found the state changed, a value
 * refused): the sale is then read, decided and written the usual way, whose retries and commission fallback
 * say what the answer is.
 */
async function saleDecidedAtOnce(
  db: Database,
  input: Parameters<typeof recordSale>[1],
  log: Logger,
  onDecided: Parameters<typeof recordSale>[3] & {},
): Promise<{ decision: SaleDecision; written: SaleWritten } | { facts: SaleFacts } | undefined> {
  const { body, keyHash, now } = input;
  const currency = saleCurrency(body);
  if (
    input.atOnce === false ||
    keyHash === null ||
    body.transaction_id == null ||
    body.amount_cents == null ||
    testByBody(body) ||
    !isSupportedCurrency(currency) ||
    !occurredAtInRange(body, now)
  ) {
    return undefined;
  }
  let atOnce: Awaited<ReturnType<typeof recordSaleAtOnce>>;
  try {
    atOnce = await recordSaleAtOnce(
      db,
      {
        keyHash,
        body: { ...body, transaction_id: body.transaction_id, amount_cents: body.amount_cents },
        currency,
        now,
      },
      input.sending,
    );
  } catch (error) {
    // Refused by the database, the write rolled back (its subtransaction): the usual way decides anew. Not a
    // lost answer or the database out of reach, after which the sale may be written: that fails as the usual
    // write's would (500, retryable; the retry's read answers 409 if it was).
    if (!isRefusedAndKeptNothing(error)) throw error;
    log.warn("the sale decided at once was refused by the database; decided anew", {
      pg_code: pgErrorOf(error)?.code,
    });
    return undefined;
  }
  if (!atOnce.written) return { facts: atOnce.facts };
  const decision = decideSale({ header: input.header, body, now }, atOnce.facts);
  const written = atOnce.written;
  if (
    decision.outcome !== "record" ||
    decision.test ||
    decision.refuseAfterWrite !== null ||
    (decision.commission?.amountCents ?? null) !== written.commissionCents
  ) {
    // Never expected (`sale-at-once.test.ts`): the rules in the database and in TypeScript disagree. The sale
    // is stored; the request fails rather than answer what was not written (with the key's notice, as ever).
    onDecided(decision, true);
    log.error("the database decided the sale otherwise than the rules", undefined, {
      sale_id: written.saleId,
      outcome: decision.outcome,
      commission_cents: written.commissionCents,
    });
    throw new Error("sale decided otherwise in the database");
  }
  return {
    decision,
    written: { saleId: written.saleId, commissionId: written.commissionId, commissionFailed: false },
  };
}
