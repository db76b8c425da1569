import { describe, expect, it } from "vitest";
import { NOT_HELD_MESSAGE } from "../../functions/api/routes/programs/held-commissions.ts";
import { decide, heldCommissions, reviewedProgram } from "./held-review-harness.ts";
import { platform } from "./program-admin-harness.ts";
import { commissionRow, expectBalanceMatchesLedger, ledgerOfPartner } from "./refund-harness.ts";

// Needs a real multi-connection PostgreSQL (PGlite is one session): runs when DATABASE_URL is set.
describe("concurrent decisions on one held commission (PostgreSQL)", () => {
  it("10 approvals at once: credited once, every answer is the approval, balance = ledger", async () => {
    const { p, owner } = await reviewedProgram();
    const [held] = await heldCommissions(p, [10_000]);
    const id = held!.commissionId;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => decide(owner.token, p.programId, id, "approve")),
    );
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.data.commission).toMatchObject({ id, decision: "approve", status: "approved" });
    }
    expect((await ledgerOfPartner(p.programId, p.partnerIds[0])).map((row) => row.commissionId)).toEqual([
      id,
    ]);
    expect(await expectBalanceMatchesLedger(p.programId, p.partnerIds[0])).toBe(2000);
  });

  it("approvals and rejections at once: exactly one decision wins, the other side answers 409", async () => {
    const { p, owner } = await reviewedProgram();
    const [held] = await heldCommissions(p, [10_000]);
    const id = held!.commissionId;
    const decisions = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? "approve" : "reject"));
    const answers = await Promise.all(decisions.map((d) => decide(owner.token, p.programId, id, d)));
    const row = await commissionRow(id);
    const winner = row.status === "approved" ? "approve" : "reject";
    expect(["approved", "reversed"]).toContain(row.status);
    answers.forEach((answer, i) => {
      if (decisions[i] === winner) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(answer.body.data.commission).toMatchObject({ id, decision: winner });
      } else {
        expect(answer.status).toBe(409);
        expect(answer.body).toEqual(platform(409, NOT_HELD_MESSAGE));
      }
    });
    const ledger = await ledgerOfPartner(p.programId, p.partnerIds[0]);
    expect(ledger.map((entry) => entry.commissionId)).toEqual(winner === "approve" ? [id] : []);
    expect(await expectBalanceMatchesLedger(p.programId, p.partnerIds[0])).toBe(
      winner === "approve" ? 2000 : 0,
    );
  });
});
