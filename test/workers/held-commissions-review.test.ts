import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import {
  COMMISSION_NOT_FOUND_MESSAGE,
  INVALID_DECISION_MESSAGE,
  NOT_HELD_MESSAGE,
  NOT_REVIEWER_MESSAGE,
} from "../../functions/api/routes/programs/held-commissions.ts";
import { PROGRAM_ACCESS_REFUSED } from "../../lib/auth/require-program-membership.ts";
import { auditLog, commissions, webhookEvents } from "../../schema/index.ts";
import { call } from "./dashboard-sign-in.ts";
import { db } from "./harness.ts";
import {
  decide,
  heldCommissions,
  heldPath,
  pendingCommission,
  reviewedProgram,
  reviewPath,
} from "./held-review-harness.ts";
import { addMember, platform, signedInPerson } from "./program-admin-harness.ts";
import { inOneWindow } from "./rate-limit-helpers.ts";
import {
  commissionRow,
  expectBalanceMatchesLedger,
  expectQueuedNotification,
  ledgerOfPartner,
} from "./refund-harness.ts";
import { balanceOf } from "./sale-harness.ts";
import { endpointFor } from "./webhook-harness.ts";

const allEvents = ["commission.approved", "commission.updated"];

async function eventByKey(dedupeKey: string) {
  const [row] = await db.select().from(webhookEvents).where(eq(webhookEvents.dedupeKey, dedupeKey));
  return row;
}

async function reviewAudit(programId: number) {
  return db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.programId, programId), eq(auditLog.action, "program.commission_reviewed")));
}

describe("deciding commissions held for fraud review", () => {
  it("lists the held commissions newest first, with their flags, and nothing that is not held", async () => {
    const { p, owner } = await reviewedProgram();
    const [older, newer] = await heldCommissions(p, [10_000, 20_000]);
    const notHeld = await pendingCommission(p);
    const listed = await call("GET", heldPath(p.programId), { token: owner.token });
    expect(listed.status).toBe(200);
    const rows = listed.body.data.commissions as Record<string, unknown>[];
    expect(rows.map((row) => row.id)).toEqual([newer!.commissionId, older!.commissionId]);
    expect(await commissionRow(notHeld)).toMatchObject({ status: "pending", needsManualReview: false });
    const stored = await commissionRow(newer!.commissionId);
    expect(rows[0]).toEqual({
      id: newer!.commissionId,
      sale_id: newer!.saleId,
      partner_id: p.partnerIds[0],
      partner_name: "Partner A",
      amount_cents: 4000,
      currency: "USD",
      fraud_flags: ["fast_conversion"],
      hold_until: stored.holdUntil!.toISOString(),
      created_at: stored.createdAt.toISOString(),
    });
  });

  it("approve credits once (ledger, balance, webhook, notification, audit); the same decision again answers the same", async () => {
    const { p, owner } = await reviewedProgram();
    const endpoint = await endpointFor(p.programId, "https://hooks.brand.example/h", allEvents);
    expect(endpoint.id).toBeGreaterThan(0);
    const [held] = await heldCommissions(p, [10_000]);
    const id = held!.commissionId;
    const partner = p.partnerIds[0];

    const approved = await decide(owner.token, p.programId, id, "approve");
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual({
      success: true,
      data: {
        commission: {
          id,
          decision: "approve",
          status: "approved",
          amount_cents: 2000,
          deducted_cents: 0,
          currency: "USD",
        },
      },
    });
    expect(await commissionRow(id)).toMatchObject({ status: "approved", needsManualReview: false });
    expect((await commissionRow(id)).creditedAt).not.toBeNull();
    expect(await expectBalanceMatchesLedger(p.programId, partner)).toBe(2000);
    expect((await eventByKey(`commission.approved:${id}`))?.type).toBe("commission.approved");
    await expectQueuedNotification(`commission:${id}:approved`);

    const again = await decide(owner.token, p.programId, id, "approve");
    expect(again).toMatchObject({ status: 200, body: approved.body });
    expect((await ledgerOfPartner(p.programId, partner)).map((row) => row.commissionId)).toEqual([id]);
    expect(await expectBalanceMatchesLedger(p.programId, partner)).toBe(2000);

    const reject = await decide(owner.token, p.programId, id, "reject");
    expect(reject.status).toBe(409);
    expect(reject.body).toEqual(platform(409, NOT_HELD_MESSAGE));
    expect(await commissionRow(id)).toMatchObject({ status: "approved" });

    const audit = await reviewAudit(p.programId);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actorUserId: owner.userId,
      changes: {
        commission_id: String(id),
        decision: "approve",
        status: { from: "pending", to: "approved" },
      },
    });
    const listed = await call("GET", heldPath(p.programId), { token: owner.token });
    expect(listed.body.data.commissions).toEqual([]);
  });

  it("reject reverses it whole and moves no money; the same decision again answers the same", async () => {
    const { p, owner } = await reviewedProgram();
    await endpointFor(p.programId, "https://hooks.brand.example/h", allEvents);
    const [held] = await heldCommissions(p, [10_000]);
    const id = held!.commissionId;
    const partner = p.partnerIds[0];

    const rejected = await decide(owner.token, p.programId, id, "reject");
    expect(rejected.status).toBe(200);
    expect(rejected.body.data.commission).toEqual({
      id,
      decision: "reject",
      status: "reversed",
      amount_cents: 2000,
      deducted_cents: 2000,
      currency: "USD",
    });
    expect(await commissionRow(id)).toMatchObject({
      status: "reversed",
      deductedCents: 2000,
      needsManualReview: false,
      creditedAt: null,
    });
    expect(await ledgerOfPartner(p.programId, partner)).toEqual([]);
    expect(await balanceOf(p.programId, partner)).toBe(0);
    const event = await eventByKey(`commission.updated:review:${id}`);
    expect(event).toMatchObject({ type: "commission.updated" });
    expect(event!.data).toMatchObject({
      commission_id: id,
      status: "reversed",
      net_amount_cents: 0,
      reason: "fraud_review",
      refund: null,
    });

    const again = await decide(owner.token, p.programId, id, "reject");
    expect(again).toMatchObject({ status: 200, body: rejected.body });
    const approve = await decide(owner.token, p.programId, id, "approve");
    expect(approve.status).toBe(409);
    expect(approve.body).toEqual(platform(409, NOT_HELD_MESSAGE));
    expect(await ledgerOfPartner(p.programId, partner)).toEqual([]);
    expect(await reviewAudit(p.programId)).toHaveLength(1);
  });

  it("two approvals at once credit once and both answer the approval", async () => {
    const { p, owner } = await reviewedProgram();
    const [held] = await heldCommissions(p, [10_000]);
    const id = held!.commissionId;
    const answers = await Promise.all([
      decide(owner.token, p.programId, id, "approve"),
      decide(owner.token, p.programId, id, "approve"),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect((await ledgerOfPartner(p.programId, p.partnerIds[0])).map((row) => row.commissionId)).toEqual([
      id,
    ]);
    expect(await expectBalanceMatchesLedger(p.programId, p.partnerIds[0])).toBe(2000);
  });

  const refusals: [
    string,
    (ids: { held: number; other: number; pending: number }) => string,
    unknown,
    number,
    string,
  ][] = [
    ["a decision that is not one", (ids) => String(ids.held), "maybe", 400, INVALID_DECISION_MESSAGE],
    ["no decision", (ids) => String(ids.held), undefined, 400, INVALID_DECISION_MESSAGE],
    ["an unknown commission", () => "999999999999", "approve", 404, COMMISSION_NOT_FOUND_MESSAGE],
    ["a commission id that is not a number", () => "abc", "approve", 404, COMMISSION_NOT_FOUND_MESSAGE],
    [
      "another program's held commission",
      (ids) => String(ids.other),
      "approve",
      404,
      COMMISSION_NOT_FOUND_MESSAGE,
    ],
    ["a pending commission not held", (ids) => String(ids.pending), "approve", 409, NOT_HELD_MESSAGE],
    ["a pending commission not held (reject)", (ids) => String(ids.pending), "reject", 409, NOT_HELD_MESSAGE],
  ];
  it.each(refusals)("%s is refused", async (_name, idOf, decision, status, message) => {
    const { p, owner } = await reviewedProgram();
    const [held] = await heldCommissions(p, [10_000]);
    const other = await reviewedProgram();
    const [otherHeld] = await heldCommissions(other.p, [10_000]);
    const pending = await pendingCommission(p);
    const ids = {
      held: held!.commissionId,
      other: otherHeld!.commissionId,
      pending,
    };
    const response = await call("POST", reviewPath(p.programId, idOf(ids)), {
      token: owner.token,
      body: decision === undefined ? {} : { decision },
    });
    expect(response.status).toBe(status);
    expect(response.body).toEqual(platform(status, message));
    // Nothing was decided.
    for (const id of [ids.held, ids.other])
      expect(await commissionRow(id)).toMatchObject({ status: "pending", needsManualReview: true });
    expect(await reviewAudit(p.programId)).toEqual([]);
  });

  const routes: [string, (programId: number, commissionId: number) => string, unknown][] = [
    ["GET held", (programId) => heldPath(programId), undefined],
    ["POST review", (programId, id) => reviewPath(programId, id), { decision: "approve" }],
  ];
  it.each(routes)(
    "%s: a plain member, another workspace, a program key and no token are refused",
    async (_name, pathOf, body) => {
      const { p, advertiserId } = await reviewedProgram();
      const [held] = await heldCommissions(p, [10_000]);
      const member = await signedInPerson();
      await addMember(advertiserId, member.userId, "member");
      const stranger = await signedInPerson();
      for (const [token, status, message] of [
        [member.token, 403, NOT_REVIEWER_MESSAGE],
        [stranger.token, 403, PROGRAM_ACCESS_REFUSED],
        [
          p.apiKey,
          401,
          "A program API key is not accepted here. Sign in to the dashboard and use its sign-in token.",
        ],
        [undefined, 401, "Sign-in required"],
      ] as const) {
        const response = await call(
          body === undefined ? "GET" : "POST",
          pathOf(p.programId, held!.commissionId),
          {
            ...(body === undefined ? {} : { body }),
            ...(token ? { token } : {}),
          },
        );
        expect(response.status).toBe(status);
        expect(response.body).toEqual(platform(status, message));
      }
      expect(await commissionRow(held!.commissionId)).toMatchObject({
        status: "pending",
        needsManualReview: true,
      });
    },
  );

  it("rate limited like the webhook routes: 30 reads per minute per token, decisions counted apart", async () => {
    const headers = { "CF-Connecting-IP": "10.250.0.2" };
    const {
      p,
      owner,
      answers: reads,
    } = await inOneWindow(async () => {
      const { p, owner } = await reviewedProgram();
      const answers = [];
      for (let i = 0; i < 31; i++)
        answers.push(await call("GET", heldPath(p.programId), { token: owner.token, headers }));
      return { p, owner, answers };
    });
    const [held] = await heldCommissions(p, [10_000]);
    expect(reads.slice(0, 30).map((r) => r.status)).toEqual(Array(30).fill(200));
    const refused = reads[30]!;
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    const decided = await call("POST", reviewPath(p.programId, held!.commissionId), {
      token: owner.token,
      headers,
      body: { decision: "reject" },
    });
    expect(decided.status).toBe(200);
    expect(decided.headers.get("X-RateLimit-Remaining")).toBe("29");
  });

  it("an admin may decide", async () => {
    const { p, advertiserId } = await reviewedProgram();
    const [held] = await heldCommissions(p, [10_000]);
    const admin = await signedInPerson();
    await addMember(advertiserId, admin.userId, "admin");
    const response = await decide(admin.token, p.programId, held!.commissionId, "reject");
    expect(response.status).toBe(200);
    const [row] = await db.select().from(commissions).where(eq(commissions.id, held!.commissionId));
    expect(row?.status).toBe("reversed");
  });
});
