import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  checkoutSession,
  connectedProgram,
  deliver,
  event,
  eventRow,
  signatureFor,
} from "./stripe-harness.ts";

const limit = 262_144;

/** A signed event padded (in its metadata) to exactly `bytes` bytes. */
async function paddedEvent(account: string, bytes: number) {
  const e = event("checkout.session.completed", checkoutSession({ metadata: { pad: "" } }), { account });
  const base = JSON.stringify(e).length;
  (e.data.object.metadata as Record<string, string>).pad = "x".repeat(bytes - base);
  const payload = JSON.stringify(e);
  return { e, payload, signature: await signatureFor(payload) };
}

function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 16_384) controller.enqueue(bytes.slice(at, at + 16_384));
      controller.close();
    },
  });
}

describe("events body limit (256 KB)", () => {
  it.each(["Content-Length", "chunked"] as const)(
    "%s: one byte over is a 413 and the event is not claimed",
    async (framing) => {
      const p = await connectedProgram();
      const { e, payload, signature } = await paddedEvent(p.accountId, limit + 1);
      expect(new TextEncoder().encode(payload).length).toBe(limit + 1);
      const response = await SELF.fetch("https://events.test/webhooks/stripe", {
        method: "POST",
        headers: { "Content-Type": "application/json", "Stripe-Signature": signature },
        body: framing === "chunked" ? chunked(payload) : payload,
      });
      expect(response.status).toBe(413);
      expect(await response.json()).toEqual({
        error: { code: "payload_too_large", message: "Request body too large (limit 262144 bytes)" },
      });
      expect(await eventRow(e.id)).toBeUndefined();
    },
  );

  it("an event of exactly the limit is processed", async () => {
    const p = await connectedProgram();
    const { e, payload } = await paddedEvent(p.accountId, limit);
    const response = await deliver(payload);
    expect(response.status).toBe(200);
    expect((await eventRow(e.id))?.status).toBe("completed");
  });
});
