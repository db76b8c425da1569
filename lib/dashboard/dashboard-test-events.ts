import { and, eq, inArray } from "drizzle-orm";
import { clickEvents, leadEvents, saleEvents } from "../../schema/events.ts";
import {
  runTestEvent,
  type TestEventRequest,
  type TestEventResult,
} from "../cli/test-events/run-test-event.ts";
import type { TrackingCalls } from "../cli/test-events/tracking-calls.ts";
import type { Database } from "../db/client.ts";
import { withVerificationKey } from "./verification-key.ts";

/**
 * A test event or the synthetic chain from the dashboard: the command line's own use case (fixtures, the
 * 10-per-program-per-hour chain cap, each step through the tracking endpoints), run with a verification key
 * of the program that lives only for this run. `callsWith` gives the tracking calls for an Authorization value.
 */
export async function runDashboardTest(
  db: Database,
  callsWith: (authorization: string) => TrackingCalls,
  input: { programId: number; now: Date; docsUrl: string; request: TestEventRequest },
): Promise<Exclude<TestEventResult, { outcome: "refused" }>> {
  const result = await withVerificationKey(db, input.programId, input.now, (key) =>
    runTestEvent(db, callsWith(`Bearer ${key.token}`), {
      header: { kind: "token", token: key.token },
      keyHash: key.keyHash,
      now: input.now,
      docsUrl: input.docsUrl,
      request: input.request,
    }),
  );
  // The key was made for this run a moment ago: a refusal means our own data is wrong.
  if (result.outcome === "refused") throw new Error("the verification key was refused");
  return result;
}

/** A test event as the test route returned it: a click by its click id, a lead or sale by its event id. */
export type TestEventRef = { kind: "click"; id: string } | { kind: "lead" | "sale"; id: number };

export interface LandedEvent {
  kind: TestEventRef["kind"];
  id: string | number;
  landed: boolean;
  /** When it was recorded (null when not found). */
  recorded_at: string | null;
}

export const maxCheckedEvents = 20;

/**
 * Which of these test events are recorded in this program (as test events). One round trip (a batch of up
 * to three reads); another program's or a live event with that id does not count as landed.
 */
export async function checkTestEvents(
  db: Database,
  programId: number,
  refs: readonly TestEventRef[],
): Promise<{ events: LandedEvent[]; all_landed: boolean }> {
  const clickIds = refs.flatMap((r) => (r.kind === "click" ? [r.id] : []));
  const leadIds = refs.flatMap((r) => (r.kind === "lead" ? [r.id] : []));
  const saleIds = refs.flatMap((r) => (r.kind === "sale" ? [r.id] : []));
  const clicks = db
    .select({ id: clickEvents.clickId, at: clickEvents.createdAt })
    .from(clickEvents)
    .where(
      and(
        eq(clickEvents.programId, programId),
        eq(clickEvents.isTest, true),
        inArray(clickEvents.clickId, clickIds.length ? clickIds : [""]),
      ),
    );
  const leads = db
    .select({ id: leadEvents.id, at: leadEvents.createdAt })
    .from(leadEvents)
    .where(
      and(
        eq(leadEvents.programId, programId),
        eq(leadEvents.isTest, true),
        inArray(leadEvents.id, leadIds.length ? leadIds : [0]),
      ),
    );
  const sales = db
    .select({ id: saleEvents.id, at: saleEvents.createdAt })
    .from(saleEvents)
    .where(
      and(
        eq(saleEvents.programId, programId),
        eq(saleEvents.isTest, true),
        inArray(saleEvents.id, saleIds.length ? saleIds : [0]),
      ),
    );
  const [clickRows, leadRows, saleRows] = await db.batch([clicks, leads, sales]);
  const found = new Map<string, string>();
  const iso = (at: unknown) => (at instanceof Date ? at : new Date(String(at))).toISOString();
  for (const row of clickRows) found.set(`click:${row.id}`, iso(row.at));
  for (const row of leadRows) found.set(`lead:${row.id}`, iso(row.at));
  for (const row of saleRows) found.set(`sale:${row.id}`, iso(row.at));
  const events = refs.map((ref): LandedEvent => {
    const at = found.get(`${ref.kind}:${ref.id}`) ?? null;
    return { kind: ref.kind, id: ref.id, landed: at !== null, recorded_at: at };
  });
  return { events, all_landed: events.every((e) => e.landed) };
}
