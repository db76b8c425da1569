import type { BearerHeader } from "../../auth/bearer.ts";
import { evaluateApiKey, type KeyRotation, readApiKeyRecord } from "../../auth/program-key.ts";
import type { Database } from "../../db/client.ts";
import type { ApiError } from "../../errors/api-error.ts";
import { cliKeyMessages } from "../program-key-auth.ts";
import { type Fixtures, prepareChain } from "./synthetic-fixtures.ts";
import { reportOf, type StepReport, type TrackingCalls } from "./tracking-calls.ts";

export const testEventTypes = ["click", "lead", "sale"] as const;
export type TestEventType = (typeof testEventTypes)[number];

export type TestEventRequest = { kind: "event"; eventType: TestEventType } | { kind: "chain" };

export type TestEventResult =
  | { outcome: "refused"; error: ApiError }
  | { outcome: "chain_capped"; retryAfterSeconds: number; rotation: KeyRotation | null }
  | { outcome: "event"; report: StepReport; programId: number; rotation: KeyRotation | null }
  | { outcome: "chain"; steps: StepReport[]; programId: number; rotation: KeyRotation | null };

/** A synthetic sale: 10.00 USD, enough to exercise the commission rules without looking like real money. */
const syntheticAmountCents = 1000;

/**
 * `test-event`: checks the program key (one read), refreshes the program's verification fixtures (and, for
 * a chain, takes one of its 10 hourly slots) in one transaction, then records the test events through the
 * tracking endpoints' own code with the same key, so they count toward integration verification exactly
 * like events a brand sends in test mode. A chain stops at the first step that fails and reports each step.
 */
export async function runTestEvent(
  db: Database,
  calls: TrackingCalls,
  input: { header: BearerHeader; keyHash: string; now: Date; docsUrl: string; request: TestEventRequest },
): Promise<TestEventResult> {
  const record = await readApiKeyRecord(db, input.keyHash);
  const verdict = evaluateApiKey(input.header, record, input.now, cliKeyMessages, input.docsUrl);
  if (!verdict.ok) return { outcome: "refused", error: verdict.error };
  const { programId, rotation } = verdict;

  const chain = input.request.kind === "chain";
  const { fixtures, slot } = await prepareChain(db, programId, input.now, { takeChainSlot: chain });
  if (!slot.granted) return { outcome: "chain_capped", retryAfterSeconds: slot.retryAfterSeconds, rotation };

  const run = new SyntheticRun(calls, programId, fixtures);
  if (input.request.kind === "event") {
    return { outcome: "event", report: await run.step(input.request.eventType), programId, rotation };
  }
  const steps: StepReport[] = [];
  for (const type of testEventTypes) {
    const report = await run.step(type);
    steps.push(report);
    if (!report.ok) break;
  }
  return { outcome: "chain", steps, programId, rotation };
}

/** One synthetic customer's click -> lead -> sale, each step carrying the ids of the ones before. */
class SyntheticRun {
  private clickId: string | null = null;
  private readonly customerKey = `synthetic-${crypto.randomUUID()}`;

  constructor(
    private readonly calls: TrackingCalls,
    private readonly programId: number,
    private readonly fixtures: Fixtures,
  ) {}

  async step(type: TestEventType): Promise<StepReport> {
    const testMode = { test_mode: true, program_id: this.programId };
    if (type === "click") {
      const url = `https://${this.fixtures.domain}/?aff=${encodeURIComponent(this.fixtures.linkCode)}`;
      const report = reportOf(
        "click",
        await this.calls.post("/api/v1/track/click", { affiliate_url: url, additional_data: testMode }),
      );
      if (typeof report.id === "string") this.clickId = report.id;
      return report;
    }
    const attribution = {
      customer_key: this.customerKey,
      ...(this.clickId ? { click_id: this.clickId } : {}),
    };
    if (type === "lead") {
      return reportOf(
        "lead",
        await this.calls.post("/api/v1/track/lead", {
          ...attribution,
          additional_data: { ...testMode, event_name: "synthetic_verification" },
        }),
      );
    }
    return reportOf(
      "sale",
      await this.calls.post("/api/v1/track/sale", {
        ...attribution,
        transaction_id: `synthetic_${crypto.randomUUID()}`,
        amount_cents: syntheticAmountCents,
        currency: "USD",
        additional_data: { test_mode: true },
      }),
    );
  }
}
