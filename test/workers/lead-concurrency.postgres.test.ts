import { describe, expect, inject, it } from "vitest";
import { createProgram, postJson } from "./harness.ts";
import { bearer, customersOfProgram, leadEventsOfProgram, leadPath, recordClick } from "./lead-helpers.ts";

/**
 * Runs only with DATABASE_URL (a real multi-connection PostgreSQL; PGlite is one session and would
 * serialise the requests). Identical settled leads at once must create exactly one customer: the losers'
 * write batches hit the unique constraints, re-read, and answer the status 400.
 */
describe("concurrent identical leads (PostgreSQL)", () => {
  it("10 at once: one 200, nine status 400, one customer", async () => {
    expect(inject("databaseBackend")).toBe("postgres");
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        postJson(leadPath, { click_id: clickId, customer_key: "race-1" }, bearer(p.apiKey)),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 400, 400, 400, 400, 400, 400, 400, 400, 400]);
    expect(responses.find((r) => r.status === 200)?.body).toEqual({
      success: true,
      message: "Lead recorded",
    });
    for (const refused of responses.filter((r) => r.status === 400)) {
      expect(refused.body).toEqual({
        data: null,
        error: {
          status: 400,
          name: "BadRequestError",
          message: "Customer status cannot be updated to lead. Current status: lead",
          details: {},
        },
      });
    }
    const rows = await customersOfProgram(p.programId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ clickId, customerKey: "race-1", status: "lead" });
    expect(await leadEventsOfProgram(p.programId)).toHaveLength(1);
  });

  it("10 at once with different keys on one click: still one customer", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        postJson(leadPath, { click_id: clickId, customer_key: `race-${i}` }, bearer(p.apiKey)),
      ),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 400)).toHaveLength(9);
    expect(await customersOfProgram(p.programId)).toHaveLength(1);
  });
});
