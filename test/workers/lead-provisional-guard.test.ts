import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { pgErrorOf } from "../../lib/db/errors.ts";
import { provisionalLeadWrite, provisionalLeadWriteSent } from "../../lib/tracking/lead/lead-store.ts";
import { customers, leadEvents } from "../../schema/index.ts";
import { createProgram, db, type ProgramFixture } from "./harness.ts";
import { click } from "./sale-harness.ts";

/** The values of a provisional lead of `clickId` (the sequence's one step, `event`). */
function provisionalLeadValues(p: ProgramFixture, clickId: string, customerKey: string | null) {
  return {
    event: {
      programId: p.programId,
      partnerId: p.partnerIds[0],
      clickId,
      customerKey,
      emailHash: null,
      emailMasked: null,
      eventName: "signup",
      provisional: true,
      settledAt: null,
      viaApiKey: false,
      ipHash: null,
      uaHash: null,
      isTest: false,
      createdAt: new Date().toISOString(),
      unchangedProgramId: p.programId,
      unchangedClickId: clickId,
      unchangedCustomerKey: customerKey,
    },
  };
}

/** A provisional lead of `clickId`, as the browser's lead write sends it alone (`write_provisional_lead`). */
function provisionalLead(p: ProgramFixture, clickId: string, customerKey: string | null) {
  return db.execute<{ id: string; enqueued: number }>(
    provisionalLeadWrite.call(provisionalLeadValues(p, clickId, customerKey)),
  );
}

async function customerOf(
  p: ProgramFixture,
  clickId: string,
  status: "clicked" | "lead",
  key: string | null,
) {
  await db.insert(customers).values({
    programId: p.programId,
    partnerId: p.partnerIds[0],
    clickId,
    clickedAt: new Date(),
    customerKey: key,
    status,
  });
}

async function leadsOf(p: ProgramFixture, clickId: string) {
  return db
    .select({ id: leadEvents.id })
    .from(leadEvents)
    .where(and(eq(leadEvents.programId, p.programId), eq(leadEvents.clickId, clickId)));
}

/**
 * The provisional lead's insert carries its guard (migration 0040): written only while no customer of its
 * click or key has become a lead since the read that decided it.
 */
describe("provisional lead guard", () => {
  it("writes the lead and its webhook while the click's customer is still only clicked", async () => {
    const p = await createProgram();
    const clickId = await click(p);
    await customerOf(p, clickId, "clicked", null);
    const written = await provisionalLead(p, clickId, "user-1");
    expect(written.rows).toEqual([{ id: expect.anything(), enqueued: expect.any(Number) }]);
    expect(await leadsOf(p, clickId)).toHaveLength(1);
  });

  const changes: Array<{ name: string; customer: (p: ProgramFixture, clickId: string) => Promise<void> }> = [
    { name: "its click's customer", customer: (p, clickId) => customerOf(p, clickId, "lead", null) },
    {
      name: "a customer of its key",
      customer: async (p) => customerOf(p, await click(p), "lead", "user-1"),
    },
  ];
  it.each(changes)("aborts, writing no lead, once $name has become a lead", async ({ customer }) => {
    const p = await createProgram();
    const clickId = await click(p);
    await customer(p, clickId);
    const refused = await provisionalLead(p, clickId, "user-1").catch((error: unknown) => error);
    expect(pgErrorOf(refused)).toMatchObject({
      code: "P0001",
      message: "guard failed: lead-provisional-customer-unchanged",
    });
    expect(await leadsOf(p, clickId)).toEqual([]);
  });

  it("in a batch (write_provisional_leads), fails only the lead whose customer changed, with the guard's error", async () => {
    const p = await createProgram();
    const [unchangedClick, changedClick] = [await click(p), await click(p)];
    await customerOf(p, changedClick, "lead", null);
    const { rows } = await db.execute(
      provisionalLeadWriteSent.batch.call([
        provisionalLeadValues(p, changedClick, null),
        provisionalLeadValues(p, unchangedClick, null),
      ]),
    );
    expect(rows).toEqual([
      {
        batch_item: 0,
        failed_code: "P0001",
        failed_message: "guard failed: lead-provisional-customer-unchanged",
        failed_constraint: null,
        id: null,
        enqueued: null,
      },
      {
        batch_item: 1,
        failed_code: null,
        failed_message: null,
        failed_constraint: null,
        id: expect.anything(),
        enqueued: expect.any(Number),
      },
    ]);
    expect(await leadsOf(p, changedClick)).toEqual([]);
    expect(await leadsOf(p, unchangedClick)).toHaveLength(1);
  });
});
