import type { KeptPlanStatement } from "./db/kept-plan.ts";
import type { KeptPlanBatch } from "./db/kept-plan-batch.ts";
import type { KeptPlanProcedure } from "./db/kept-plan-procedure.ts";
import type { KeptPlanSequence } from "./db/kept-plan-sequence.ts";
import type { BatchableWrite, KeptPlanWriteBatch } from "./db/kept-plan-write-batch.ts";
import { readinessFactsStatement } from "./readiness/readiness-store.ts";
import { refundAtOnce, refundAtOnceSent, refundLockOrder } from "./refunds/refund-at-once.ts";
import {
  deductionStatement,
  recordRefundStatement,
  refundCommissionStatement,
  refundFactsStatement,
  refundNotificationsStatement,
  refundReadSent,
  refundWebhookStatement,
  refundWrite,
  refundWriteSent,
} from "./refunds/refund-store.ts";
import { clickStatement, clickStatementSent } from "./tracking/click/click-store.ts";
import { leadAtOnce, leadAtOnceSent } from "./tracking/lead/lead-at-once.ts";
import {
  leadCustomerWrites,
  leadEventInserts,
  leadFactsStatement,
  leadReadSent,
  leadWrite,
  leadWriteSent,
  provisionalLeadEventInsert,
  provisionalLeadWrite,
  provisionalLeadWriteSent,
} from "./tracking/lead/lead-store.ts";
import { saleAtOnce, saleAtOnceSent, saleLockOrder } from "./tracking/sale/sale-at-once.ts";
import {
  customerWrites,
  paymentIdsClaim,
  saleCommissionCredit,
  saleCommissionInsert,
  saleFactsStatement,
  saleInserts,
  saleLinkAndFinish,
  saleReadSent,
  saleWrite,
  saleWriteSent,
} from "./tracking/sale/sale-store.ts";
import { provisionalLeadsSettle } from "./tracking/settle-provisional-leads.ts";

/**
 * Every statement run as a PL/pgSQL function (`keptPlanStatement`): the migrations must define each exactly
 * (`test/node/kept-plans.test.ts`), and `npm run plans` explains their bodies.
 */
export const keptPlanStatements: readonly KeptPlanStatement<readonly string[]>[] = [
  clickStatement,
  leadFactsStatement,
  saleFactsStatement,
  leadEventInserts.none,
  leadEventInserts.existing,
  leadEventInserts.created,
  provisionalLeadEventInsert,
  leadCustomerWrites.create,
  leadCustomerWrites.promote,
  provisionalLeadsSettle,
  saleInserts.none,
  saleInserts.update,
  saleInserts.create,
  paymentIdsClaim,
  customerWrites.create,
  customerWrites.update,
  saleCommissionInsert,
  saleCommissionCredit,
  saleLinkAndFinish,
  refundFactsStatement,
  recordRefundStatement,
  refundCommissionStatement,
  deductionStatement,
  refundWebhookStatement,
  refundNotificationsStatement,
  readinessFactsStatement,
  saleLockOrder,
  refundLockOrder,
];

/** Every sequence of kept-plan statements run as one PL/pgSQL function (`keptPlanSequence`), likewise. */
export const keptPlanSequences: readonly KeptPlanSequence<
  Record<string, KeptPlanStatement<readonly string[]>>
>[] = [leadWrite, provisionalLeadWrite, saleWrite, refundWrite];

/** Every kept-plan statement run once per item of a batch by one PL/pgSQL function (`keptPlanBatch`), likewise. */
export const keptPlanBatches: readonly KeptPlanBatch<readonly string[]>[] = [
  clickStatementSent.batch,
  leadReadSent.batch,
  saleReadSent.batch,
  refundReadSent.batch,
];

/**
 * Every write sequence run once per item of a batch, each item in a subtransaction, by one PL/pgSQL function
 * (`keptPlanWriteBatch`), likewise.
 */
export const keptPlanWriteBatches: readonly KeptPlanWriteBatch<BatchableWrite>[] = [
  leadWriteSent.batch,
  provisionalLeadWriteSent.batch,
  saleWriteSent.batch,
  refundWriteSent.batch,
  saleAtOnceSent.batch,
  refundAtOnceSent.batch,
  leadAtOnceSent.batch,
];

/** Every PL/pgSQL function written as such (`keptPlanProcedure`), likewise. */
export const keptPlanProcedures: readonly KeptPlanProcedure<readonly string[]>[] = [
  saleAtOnce,
  refundAtOnce,
  leadAtOnce,
];
