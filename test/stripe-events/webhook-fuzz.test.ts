import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { inArray, sql } from "drizzle-orm";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { stripeEvents } from "../../schema/index.ts";
import { anyJson, hostileString } from "../workers/fuzz-arbitraries.ts";
import { type ConnectedProgram, connectedProgram, db, event, signatureFor } from "./stripe-harness.ts";

/**
 * Property-based fuzzing of the events worker (`POST /webhooks/stripe`): bodies that are events, broken
 * events, any JSON and not JSON; no signature, a malformed one, one over another body, one made with
 * another secret, and valid ones; wrong methods and content types. Properties: never a 5xx; every refusal
 * is the events worker's `{"error": {"code", "message"}}`; an unsigned or badly signed body is refused and
 * nothing is stored for it; a validly signed body, whatever its shape, is answered without a 5xx.
 *
 * CI: 200 requests; FUZZ_RUNS (e.g. 20000) runs more.
 */
const runs = Number(env.FUZZ_RUNS) > 0 ? Number(env.FUZZ_RUNS) : 200;
const seed = Number(env.FUZZ_SEED) || undefined;

type Signing = "none" | "malformed" | "other body" | "other secret" | "valid";

interface WebhookRequest {
  method: string;
  contentType: string;
  body: string;
  eventId: string | null;
  signing: Signing;
}

let program: ConnectedProgram;

beforeAll(async () => {
  program = await connectedProgram();
});

const eventTypes = fc.constantFrom(
  "checkout.session.completed",
  "invoice.paid",
  "invoice.payment_succeeded",
  "charge.refunded",
  "charge.dispute.created",
  "customer.created",
  "",
);

/** A provider event whose object is generated: right keys with wrong values, hostile strings, any JSON. */
const eventBody = fc
  .record({
    type: eventTypes,
    object: fc.dictionary(
      fc.constantFrom(
        "id",
        "object",
        "amount_total",
        "amount_paid",
        "currency",
        "customer",
        "customer_email",
        "customer_details",
        "metadata",
        "client_reference_id",
        "mode",
        "payment_status",
        "payment_intent",
        "subscription",
        "lines",
        "amount_refunded",
      ),
      fc.oneof(
        anyJson,
        hostileString.filter((s) => s.length < 2_000),
        fc.constant({ program_id: "1" }),
      ),
    ),
    // The connected account half the time: only its events reach the processing past the claim.
    account: fc.oneof(
      { arbitrary: fc.constant("connected"), weight: 2 },
      fc.constant<string | null>(null),
      fc.string(),
    ),
  })
  .map(({ type, object, account }) => {
    const body = event(type, object, {
      account: account === "connected" ? program.accountId : account,
    });
    return { body: JSON.stringify(body), eventId: body.id };
  });

const anyBody = fc.oneof(
  { arbitrary: eventBody, weight: 4 },
  anyJson.map((v) => ({ body: JSON.stringify(v), eventId: null })),
  fc
    .constantFrom("", "{", "null", "[]", "\u0000", `${"[".repeat(20_000)}${"]".repeat(20_000)}`)
    .map((body) => ({ body, eventId: null })),
);

const requests: fc.Arbitrary<WebhookRequest> = fc
  .record({
    method: fc.oneof({ arbitrary: fc.constant("POST"), weight: 9 }, fc.constantFrom("GET", "PUT", "DELETE")),
    contentType: fc.oneof(
      { arbitrary: fc.constant("application/json"), weight: 4 },
      fc.constantFrom("text/plain", "application/x-www-form-urlencoded", ""),
    ),
    body: anyBody,
    // Valid signatures weighted up so that processing is reached often (with one in five, a run of 200 now
    // and then stored no event at all and the check below failed).
    signing: fc.oneof(
      { arbitrary: fc.constant<Signing>("valid"), weight: 3 },
      fc.constantFrom<Signing>("none", "malformed", "other body", "other secret"),
    ),
  })
  .map(({ method, contentType, body, signing }) => ({ method, contentType, signing, ...body }));

async function send(request: WebhookRequest): Promise<{ status: number; text: string; type: string | null }> {
  const headers: Record<string, string> = {};
  if (request.contentType) headers["Content-Type"] = request.contentType;
  if (request.signing === "malformed") headers["Stripe-Signature"] = "t=notatime,v1=zz";
  if (request.signing === "other body") headers["Stripe-Signature"] = await signatureFor(`${request.body} `);
  if (request.signing === "other secret") {
    headers["Stripe-Signature"] = await signatureFor(request.body, "whsec_someone_else_0123456789");
  }
  if (request.signing === "valid") headers["Stripe-Signature"] = await signatureFor(request.body);
  const response = await SELF.fetch("https://events.test/webhooks/stripe", {
    method: request.method,
    headers,
    ...(request.method === "GET" ? {} : { body: request.body }),
  });
  return { status: response.status, text: await response.text(), type: response.headers.get("Content-Type") };
}

async function storedEvents(eventId: string | null): Promise<number> {
  if (!eventId) return 0;
  const rows = await db
    .select()
    .from(stripeEvents)
    .where(inArray(stripeEvents.eventId, [eventId]));
  return rows.length;
}

async function holds(request: WebhookRequest): Promise<void> {
  const answer = await send(request);
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`answered ${answer.status}`);
  if (answer.status !== 200) {
    let body: { error?: { code?: unknown; message?: unknown } } | undefined;
    try {
      body = JSON.parse(answer.text);
    } catch {
      body = undefined;
    }
    if (typeof body?.error?.code !== "string" || typeof body?.error?.message !== "string") {
      problems.push(`not the events worker's error envelope: ${answer.text.slice(0, 200)}`);
    }
    if (!answer.type?.includes("application/json")) problems.push(`content type ${answer.type}`);
  }
  if (request.signing !== "valid" && request.method === "POST") {
    if (answer.status === 200) problems.push("an unsigned or badly signed body was accepted");
    if ((await storedEvents(request.eventId)) !== 0) problems.push("a refused event was stored");
  }
  if (problems.length) {
    throw new Error(
      `${request.method} ${request.signing} ${request.contentType} ${request.body.slice(0, 200)}\n  -> ${answer.status} ${answer.text.slice(0, 200)}\n  ${problems.join("\n  ")}`,
    );
  }
}

describe("fuzzing the events worker", () => {
  it(
    `holds its properties over ${runs} generated deliveries`,
    async () => {
      await fc.assert(fc.asyncProperty(requests, holds), { numRuns: runs, seed, endOnFailure: true });
      // The run reached the worker's processing, not only its signature check.
      const processed = await db.execute<{ n: string }>(
        sql`select count(*) as n from stripe_events where account_id = ${program.accountId}`,
      );
      expect(Number(processed.rows[0]!.n)).toBeGreaterThan(0);
    },
    Math.max(60_000, runs * 300),
  );
});
