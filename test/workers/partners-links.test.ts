import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { PROGRAM_ACCESS_REFUSED } from "../../lib/auth/require-program-membership.ts";
import { auditLog, clickEvents, referralLinks } from "../../schema/index.ts";
import { call } from "./dashboard-sign-in.ts";
import { db, postJson, unique } from "./harness.ts";
import {
  addMember,
  type OwnedProgram,
  ownerWithProgram,
  platform,
  signedInPerson,
} from "./program-admin-harness.ts";

const base = (id: number | string) => `/api/v1/programs/${id}`;

async function partnerOf(owner: OwnedProgram, email = `${unique("p")}@partners.example`): Promise<number> {
  const added = await call("POST", `${base(owner.programId)}/partners`, {
    token: owner.token,
    body: { name: "Pat Partner", email },
  });
  if (added.status !== 201) throw new Error(`add partner answered ${added.status}`);
  return added.body.data.partner.id;
}

const click = (code: string) =>
  postJson("/api/v1/track/click", { affiliate_url: `https://shop.example.com/?aff=${code}` });

describe("partners and referral links", () => {
  it("adds a partner, creates a link, lists it, turns it off (click 410, nothing recorded) and on again", async () => {
    const owner = await ownerWithProgram();
    const email = `${unique("pat")}@Partners.Example`;
    const added = await call("POST", `${base(owner.programId)}/partners`, {
      token: owner.token,
      body: { name: "Pat Partner", email },
    });
    expect(added.status).toBe(201);
    expect(added.body.data.partner).toEqual({
      id: expect.any(Number),
      name: "Pat Partner",
      email: email.toLowerCase(),
      status: "active",
    });
    const partnerId = added.body.data.partner.id;
    // The same person again (any case): the same partner, still active.
    const again = await call("POST", `${base(owner.programId)}/partners`, {
      token: owner.token,
      body: { name: "Other Name", email: email.toUpperCase() },
    });
    expect(again.body.data.partner).toMatchObject({ id: partnerId, name: "Pat Partner" });

    const code = unique("spring");
    const created = await call("POST", `${base(owner.programId)}/links`, {
      token: owner.token,
      body: { partner_id: partnerId, short_link: code },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.link).toMatchObject({
      short_link: code,
      partner_id: partnerId,
      active: true,
      disabled_at: null,
    });
    const linkId = created.body.data.link.id;

    const generated = await call("POST", `${base(owner.programId)}/links`, {
      token: owner.token,
      body: { partner_id: partnerId },
    });
    expect(generated.status).toBe(201);
    expect(generated.body.data.link.short_link).toMatch(/^[a-z0-9]{10}$/);

    const listed = await call("GET", `${base(owner.programId)}/links`, { token: owner.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.links.map((l: { short_link: string }) => l.short_link)).toEqual([
      code,
      generated.body.data.link.short_link,
    ]);

    const first = await click(code);
    expect(first.status).toBe(200);

    const off = await call("PATCH", `${base(owner.programId)}/links/${linkId}`, {
      token: owner.token,
      body: { active: false },
    });
    expect(off.status).toBe(200);
    expect(off.body.data.link).toMatchObject({ active: false, disabled_at: expect.any(String) });
    const refused = await click(code);
    expect(refused.status).toBe(410);
    expect((refused.body.error as { code: string }).code).toBe("link_disabled");
    const clicks = await db.select().from(clickEvents).where(eq(clickEvents.programId, owner.programId));
    expect(clicks).toHaveLength(1);

    // Turning it off twice changes nothing more; on again and clicks count.
    expect(
      (
        await call("PATCH", `${base(owner.programId)}/links/${linkId}`, {
          token: owner.token,
          body: { active: false },
        })
      ).status,
    ).toBe(200);
    const on = await call("PATCH", `${base(owner.programId)}/links/${linkId}`, {
      token: owner.token,
      body: { active: true },
    });
    expect(on.body.data.link).toMatchObject({ active: true, disabled_at: null });
    expect((await click(code)).status).toBe(200);

    const audit = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.programId, owner.programId), eq(auditLog.action, "program.link_state_changed")));
    expect(audit.map((a) => a.changes)).toEqual([
      { active: { from: true, to: false }, short_link: { from: code, to: code } },
      { active: { from: false, to: true }, short_link: { from: code, to: code } },
    ]);
  });

  it("short_link is unique across the service: another program's code answers 409", async () => {
    const first = await ownerWithProgram();
    const second = await ownerWithProgram();
    const code = unique("taken");
    const a = await call("POST", `${base(first.programId)}/links`, {
      token: first.token,
      body: { partner_id: await partnerOf(first), short_link: code },
    });
    expect(a.status).toBe(201);
    const b = await call("POST", `${base(second.programId)}/links`, {
      token: second.token,
      body: { partner_id: await partnerOf(second), short_link: code },
    });
    expect(b.status).toBe(409);
    expect(b.body).toEqual(platform(409, "short_link is already taken"));
    expect(await db.select().from(referralLinks).where(eq(referralLinks.shortLink, code))).toHaveLength(1);
  });

  it("two requests for the same code at once: one 201, one 409", async () => {
    const owner = await ownerWithProgram();
    const partnerId = await partnerOf(owner);
    const code = unique("race");
    const answers = await Promise.all(
      [1, 2].map(() =>
        call("POST", `${base(owner.programId)}/links`, {
          token: owner.token,
          body: { partner_id: partnerId, short_link: code },
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
  });

  const invalid: [string, string, string, (o: OwnedProgram, partnerId: number) => unknown, number, string][] =
    [
      [
        "partner without email",
        "POST",
        "partners",
        () => ({ name: "A" }),
        400,
        "email must be an email address",
      ],
      [
        "partner with a bad email",
        "POST",
        "partners",
        () => ({ name: "A", email: "not-an-email" }),
        400,
        "email must be an email address",
      ],
      [
        "partner at a reserved .invalid domain (the verification chain's own partner)",
        "POST",
        "partners",
        (o) => ({ name: "A", email: `synthetic-verification+p${o.programId}@Fixtures.INVALID` }),
        400,
        "email must be an email address",
      ],
      [
        "partner without name",
        "POST",
        "partners",
        () => ({ email: "a@b.example" }),
        400,
        "name must be a non-empty string of at most 200 characters",
      ],
      [
        "partner with an unknown field",
        "POST",
        "partners",
        () => ({ name: "A", email: "a@b.example", rate: 5 }),
        400,
        "Unknown field: rate. Valid: name, email",
      ],
      [
        "link without partner",
        "POST",
        "links",
        () => ({ short_link: "abcdef" }),
        400,
        "partner_id must be an active partner of this program",
      ],
      [
        "link for a stranger partner",
        "POST",
        "links",
        () => ({ partner_id: 2147483000 }),
        400,
        "partner_id must be an active partner of this program",
      ],
      [
        "link code too short",
        "POST",
        "links",
        (_, partnerId) => ({ partner_id: partnerId, short_link: "ab" }),
        400,
        "short_link must be 3 to 64 characters (letters, digits, '-' or '_'), starting with a letter or digit",
      ],
      [
        "link code with a space",
        "POST",
        "links",
        (_, partnerId) => ({ partner_id: partnerId, short_link: "spring sale" }),
        400,
        "short_link must be 3 to 64 characters (letters, digits, '-' or '_'), starting with a letter or digit",
      ],
      [
        "link code starting with a dash",
        "POST",
        "links",
        (_, partnerId) => ({ partner_id: partnerId, short_link: "-spring" }),
        400,
        "short_link must be 3 to 64 characters (letters, digits, '-' or '_'), starting with a letter or digit",
      ],
      [
        "link code in the verification chain's namespace",
        "POST",
        "links",
        (owner, partnerId) => ({ partner_id: partnerId, short_link: `synthetic-verify-p${owner.programId}` }),
        400,
        "short_link must not start with synthetic-verify- (reserved for the verification chain's link)",
      ],
      [
        "link state not a boolean",
        "PATCH",
        "links/LINK",
        () => ({ active: "no" }),
        400,
        "active must be true or false",
      ],
      [
        "link of another program",
        "PATCH",
        "links/2147483000",
        () => ({ active: false }),
        404,
        "Referral link not found",
      ],
      [
        "link id not a number",
        "PATCH",
        "links/abc",
        () => ({ active: false }),
        404,
        "Referral link not found",
      ],
    ];
  it.each(invalid)("%s", async (_, method, path, body, status, message) => {
    const owner = await ownerWithProgram();
    const partnerId = await partnerOf(owner);
    const link = await call("POST", `${base(owner.programId)}/links`, {
      token: owner.token,
      body: { partner_id: partnerId },
    });
    const response = await call(
      method,
      `${base(owner.programId)}/${path.replace("LINK", String(link.body.data.link.id))}`,
      {
        token: owner.token,
        body: body(owner, partnerId),
      },
    );
    expect(response.status).toBe(status);
    expect(response.body).toEqual(platform(status, message));
  });

  const routes: [string, string, unknown][] = [
    ["POST", "partners", { name: "A", email: "a@b.example" }],
    ["GET", "links", undefined],
    ["POST", "links", { partner_id: 1 }],
    ["PATCH", "links/1", { active: false }],
  ];
  it.each(routes)(
    "%s %s: another workspace, a removed member, a program key and no token are refused",
    async (method, path, body) => {
      const owner = await ownerWithProgram();
      const stranger = await signedInPerson();
      const removed = await signedInPerson();
      await addMember(owner.advertiserId, removed.userId, "admin", "removed");
      const opts = body === undefined ? {} : { body };
      for (const [token, status, message] of [
        [stranger.token, 403, PROGRAM_ACCESS_REFUSED],
        [removed.token, 403, PROGRAM_ACCESS_REFUSED],
        [
          owner.apiKey,
          401,
          "A program API key is not accepted here. Sign in to the dashboard and use its sign-in token.",
        ],
        [undefined, 401, "Sign-in required"],
      ] as const) {
        const response = await call(method, `${base(owner.programId)}/${path}`, {
          ...opts,
          ...(token ? { token } : {}),
        });
        expect(response.status).toBe(status);
        expect(response.body).toEqual(platform(status, message));
      }
    },
  );
});

describe("POST and GET /api/v1/programs", () => {
  it("creates a program in the person's workspace (keys shown once) and lists it", async () => {
    const person = await signedInPerson();
    const created = await call("POST", "/api/v1/programs", {
      token: person.token,
      body: {
        name: "My first program",
        domain: "shop.example.com",
        commission_type: "percent",
        commission_rate: 15,
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.program).toMatchObject({
      workspace_id: person.advertiserId,
      name: "My first program",
    });
    expect(created.body.data.api_key).toMatch(/^sk_live_/);
    expect(created.body.data.test_api_key).toMatch(/^sk_test_/);
    const listed = await call("GET", "/api/v1/programs", { token: person.token });
    expect(listed.body.data.programs).toEqual([
      expect.objectContaining({
        id: created.body.data.program.id,
        role: "owner",
        workspace_id: person.advertiserId,
      }),
    ]);
  });

  it.each([
    [{ name: "x" }, 400, "Missing required fields: name, domain, commission_type, commission_rate"],
    [
      { name: "x", domain: "a.example", commission_type: "percent", commission_rate: 120 },
      400,
      "commission_rate is a percentage for this type and cannot exceed 100",
    ],
  ])("refuses %j with the init rules", async (body, status, message) => {
    const person = await signedInPerson();
    const response = await call("POST", "/api/v1/programs", { token: person.token, body });
    expect(response.body).toEqual(platform(status, message));
  });

  it("creates in the workspace advertiser_id names only when the person owns or administers it", async () => {
    const owner = await ownerWithProgram();
    const person = await signedInPerson();
    await addMember(owner.advertiserId, person.userId, "member");
    const fields = { name: "x", domain: "a.example", commission_type: "fixed", commission_rate: 5 };
    const mismatch = platform(403, "advertiser_id does not match the authenticated account");
    for (const [advertiserId, expected] of [
      [999_999_999, mismatch],
      // A workspace the person is only a member of.
      [owner.advertiserId, mismatch],
      ["not a number", mismatch],
      [{ id: person.advertiserId }, mismatch],
    ] as const) {
      const response = await call("POST", "/api/v1/programs", {
        token: person.token,
        body: { ...fields, advertiser_id: advertiserId },
      });
      expect(response.body, JSON.stringify(advertiserId)).toEqual(expected);
    }
    const programsOfOwner = await db.execute(
      sql`select count(*)::int as n from programs where advertiser_id = ${owner.advertiserId}`,
    );
    expect(programsOfOwner.rows[0]).toEqual({ n: 1 });
    for (const own of [person.advertiserId, String(person.advertiserId), null]) {
      const created = await call("POST", "/api/v1/programs", {
        token: person.token,
        body: { ...fields, advertiser_id: own },
      });
      expect(created.status, JSON.stringify(own)).toBe(201);
      expect(created.body.data.program.workspace_id).toBe(person.advertiserId);
    }
  });

  it("a person who is only a member somewhere has no workspace to create in: 403", async () => {
    const owner = await ownerWithProgram();
    const person = await signedInPerson();
    // Leaves their own workspace and is only a member of the owner's.
    await db.execute(sql`update workspace_members set status = 'removed' where user_id = ${person.userId}`);
    await addMember(owner.advertiserId, person.userId, "member");
    const response = await call("POST", "/api/v1/programs", {
      token: person.token,
      body: { name: "x", domain: "a.example", commission_type: "fixed", commission_rate: 5 },
    });
    expect(response.body).toEqual(platform(403, "No advertiser found for this account"));
  });
});
