import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { PROGRAM_ACCESS_REFUSED } from "../../lib/auth/require-program-membership.ts";
import { messages } from "../../lib/webhooks/endpoint-rules.ts";
import { openSecret } from "../../lib/webhooks/secret-box.ts";
import { auditLog, webhookEndpoints } from "../../schema/index.ts";
import { call } from "./dashboard-sign-in.ts";
import { db } from "./harness.ts";
import {
  addMember,
  type OwnedProgram,
  ownerWithProgram,
  platform,
  signedInPerson,
} from "./program-admin-harness.ts";
import { receiverBox } from "./webhook-harness.ts";

const base = (programId: number) => `/api/v1/programs/${programId}/webhooks`;
const NOT_FOUND = "Webhook endpoint not found";
const NOT_MANAGER = "Only a workspace owner or admin can manage webhooks";

async function endpointOf(owner: OwnedProgram, events = ["sale.created"]) {
  const created = await call("POST", base(owner.programId), {
    token: owner.token,
    body: { url: "https://hooks.brand.example/affiliate", events },
  });
  if (created.status !== 201) throw new Error(`create answered ${created.status}`);
  return created.body.data as { endpoint: { id: number }; secret: string };
}

describe("webhook endpoint routes", () => {
  it("creates (secret shown once, stored recoverable), lists, changes, deletes, each audited", async () => {
    const owner = await ownerWithProgram();
    const created = await call("POST", base(owner.programId), {
      token: owner.token,
      body: {
        url: "https://hooks.brand.example/affiliate",
        events: ["sale.created", "commission.updated", "sale.created"],
        description: "ERP",
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.body.data.endpoint).toMatchObject({
      url: "https://hooks.brand.example/affiliate",
      events: ["sale.created", "commission.updated"],
      description: "ERP",
      enabled: true,
      disabled_reason: null,
      failing_since: null,
      previous_secret_expires_at: null,
    });
    const id = created.body.data.endpoint.id as number;
    const [stored] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
    expect(await openSecret(stored!.secret, undefined)).toBe(created.body.data.secret);

    const listed = await call("GET", base(owner.programId), { token: owner.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.endpoints).toEqual([created.body.data.endpoint]);
    expect(JSON.stringify(listed.body)).not.toContain("whsec_");

    const changed = await call("PATCH", `${base(owner.programId)}/${id}`, {
      token: owner.token,
      body: { events: ["link.disabled"], enabled: false, description: null },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data.endpoint).toMatchObject({
      events: ["link.disabled"],
      enabled: false,
      disabled_reason: "by_user",
      description: null,
    });

    const deleted = await call("DELETE", `${base(owner.programId)}/${id}`, { token: owner.token });
    expect(deleted).toMatchObject({ status: 200, body: { success: true, data: { deleted: true } } });
    expect((await call("GET", base(owner.programId), { token: owner.token })).body.data.endpoints).toEqual(
      [],
    );

    const audit = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.programId, owner.programId), eq(auditLog.actorUserId, owner.userId)));
    expect(audit.map((a) => a.action).filter((a) => a.includes("webhook"))).toEqual([
      "program.webhook_endpoint_created",
      "program.webhook_endpoint_updated",
      "program.webhook_endpoint_deleted",
    ]);
    expect(JSON.stringify(audit)).not.toContain("whsec_");
  });

  it("an admin may manage webhooks; the test event answers 202 with its ids", async () => {
    const owner = await ownerWithProgram();
    const admin = await signedInPerson();
    await addMember(owner.advertiserId, admin.userId, "admin");
    const created = await call("POST", base(owner.programId), {
      token: admin.token,
      body: { url: receiverBox().url, events: ["lead.created"] },
    });
    expect(created.status).toBe(201);
    const sent = await call("POST", `${base(owner.programId)}/${created.body.data.endpoint.id}/test`, {
      token: admin.token,
    });
    expect(sent.status).toBe(202);
    expect(sent.body.data).toEqual({
      event_id: expect.stringMatching(/^msg_/),
      delivery_id: expect.any(Number),
    });
  });

  const invalid: [string, string, string, unknown, number, string][] = [
    ["no url", "POST", "", { events: ["sale.created"] }, 400, messages.url],
    ["http url", "POST", "", { url: "http://brand.example/h", events: ["sale.created"] }, 400, messages.url],
    ["not a url", "POST", "", { url: "hooks", events: ["sale.created"] }, 400, messages.url],
    [
      "credentials in url",
      "POST",
      "",
      { url: "https://a:b@brand.example/h", events: ["sale.created"] },
      400,
      messages.url,
    ],
    ["no events", "POST", "", { url: "https://brand.example/h" }, 400, messages.events],
    ["empty events", "POST", "", { url: "https://brand.example/h", events: [] }, 400, messages.events],
    [
      "unknown event",
      "POST",
      "",
      { url: "https://brand.example/h", events: ["sale.deleted"] },
      400,
      messages.events,
    ],
    [
      "enabled not boolean",
      "POST",
      "",
      { url: "https://brand.example/h", events: ["sale.created"], enabled: "yes" },
      400,
      messages.enabled,
    ],
    [
      "description a number",
      "POST",
      "",
      { url: "https://brand.example/h", events: ["sale.created"], description: 5 },
      400,
      messages.description,
    ],
    // A misspelt field was ignored: `enable: false` created (or left) the endpoint enabled, `overlap: 0` kept
    // the previous secret signing for 24 hours. The other settings routes answer `Unknown field` too.
    [
      "unknown field on create",
      "POST",
      "",
      { url: "https://brand.example/h", events: ["sale.created"], enable: false },
      400,
      "Unknown field: enable. Valid: url, events, enabled, description",
    ],
    [
      "unknown field on patch",
      "PATCH",
      "/{e}",
      { description: "ERP", enable: false },
      400,
      "Unknown field: enable. Valid: url, events, enabled, description",
    ],
    [
      "unknown field on rotate",
      "POST",
      "/{e}/rotate-secret",
      { overlap: 0 },
      400,
      "Unknown field: overlap. Valid: overlap_hours",
    ],
    ["empty patch", "PATCH", "/{e}", {}, 400, messages.empty],
    ["overlap too long", "POST", "/{e}/rotate-secret", { overlap_hours: 100 }, 400, messages.overlap],
    ["overlap not integer", "POST", "/{e}/rotate-secret", { overlap_hours: 1.5 }, 400, messages.overlap],
    ["patch unknown endpoint", "PATCH", "/999999999", { enabled: true }, 404, NOT_FOUND],
    ["delete unknown endpoint", "DELETE", "/999999999", undefined, 404, NOT_FOUND],
    ["rotate unknown endpoint", "POST", "/999999999/rotate-secret", {}, 404, NOT_FOUND],
    ["test unknown endpoint", "POST", "/999999999/test", undefined, 404, NOT_FOUND],
    ["attempts of unknown endpoint", "GET", "/999999999/attempts", undefined, 404, NOT_FOUND],
    ["endpoint id not a number", "GET", "/abc/attempts", undefined, 404, NOT_FOUND],
  ];
  it.each(invalid)("%s: %s answers %s", async (_name, method, suffix, body, status, message) => {
    const owner = await ownerWithProgram();
    const { endpoint } = await endpointOf(owner);
    const response = await call(
      method,
      `${base(owner.programId)}${suffix.replace("{e}", String(endpoint.id))}`,
      {
        token: owner.token,
        ...(body === undefined ? {} : { body }),
      },
    );
    expect(response.status).toBe(status);
    expect(response.body).toEqual(platform(status, message));
  });

  it("another program's endpoint is not found through this program", async () => {
    const first = await ownerWithProgram();
    const second = await ownerWithProgram();
    const { endpoint } = await endpointOf(first);
    for (const [method, suffix, body] of [
      ["PATCH", "", { enabled: false }],
      ["DELETE", "", undefined],
      ["POST", "/rotate-secret", {}],
      ["POST", "/test", undefined],
      ["GET", "/attempts", undefined],
    ] as const) {
      const response = await call(method, `${base(second.programId)}/${endpoint.id}${suffix}`, {
        token: second.token,
        ...(body === undefined ? {} : { body }),
      });
      expect(response.status).toBe(404);
      expect(response.body).toEqual(platform(404, NOT_FOUND));
    }
    const [still] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
    expect(still?.enabled).toBe(true);
  });

  const routes: [string, string, unknown][] = [
    ["POST", "", { url: "https://brand.example/h", events: ["sale.created"] }],
    ["GET", "", undefined],
    ["PATCH", "/1", { enabled: false }],
    ["DELETE", "/1", undefined],
    ["POST", "/1/rotate-secret", {}],
    ["POST", "/1/test", undefined],
    ["GET", "/1/attempts", undefined],
  ];
  it.each(routes)(
    "%s webhooks%s: a plain member, another workspace, a program key and no token are refused",
    async (method, suffix, body) => {
      const owner = await ownerWithProgram();
      const member = await signedInPerson();
      await addMember(owner.advertiserId, member.userId, "member");
      const stranger = await signedInPerson();
      for (const [token, status, message] of [
        [member.token, 403, NOT_MANAGER],
        [stranger.token, 403, PROGRAM_ACCESS_REFUSED],
        [
          owner.apiKey,
          401,
          "A program API key is not accepted here. Sign in to the dashboard and use its sign-in token.",
        ],
        [undefined, 401, "Sign-in required"],
      ] as const) {
        const response = await call(method, `${base(owner.programId)}${suffix}`, {
          ...(body === undefined ? {} : { body }),
          ...(token ? { token } : {}),
        });
        expect(response.status).toBe(status);
        expect(response.body).toEqual(platform(status, message));
      }
    },
  );
});
