import { SELF } from "cloudflare:test";
import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { testEventType, webhookApiVersion, webhookEventTypes } from "../../lib/webhooks/event-types.ts";
import { BASE, call, programOf, signInPerson } from "./dashboard-tracking-helpers.ts";
import { receiverBox } from "./webhook-harness.ts";

type Operation = {
  post: {
    description: string;
    requestBody: { content: { "application/json": { schema: Record<string, unknown> } } };
  };
};

async function webhooksSection(): Promise<Record<string, Operation>> {
  const response = await SELF.fetch("https://api.test/openapi.json");
  return ((await response.json()) as { webhooks: Record<string, Operation> }).webhooks;
}

const bodySchema = (operation: Operation | undefined) =>
  operation?.post.requestBody.content["application/json"].schema as {
    properties: { api_version: { const: string; description: string } };
  };

describe("OpenAPI webhooks section", () => {
  it("documents every event a brand can subscribe to, and the test event, with the payload version", async () => {
    const webhooks = await webhooksSection();
    expect(Object.keys(webhooks).sort()).toEqual([...webhookEventTypes, testEventType].sort());
    for (const [type, operation] of Object.entries(webhooks)) {
      const version = bodySchema(operation).properties.api_version;
      expect(version.const, type).toBe(webhookApiVersion);
      expect(version.description, type).toContain("changes only when a `data` shape changes incompatibly");
    }
    expect(webhooks[testEventType]?.post.description).toMatch(/^Sent to the one endpoint named/);
  });

  it("a test event as a receiver gets it matches its documented schema", async () => {
    const owner = await signInPerson();
    const program = await programOf(owner);
    const box = receiverBox();
    const created = await call("POST", `/api/v1/programs/${program.programId}/webhooks`, {
      cookie: owner.token,
      origin: BASE,
      body: { url: box.url, events: ["sale.created"] },
    });
    expect(created.status).toBe(201);
    const sent = await call(
      "POST",
      `/api/v1/programs/${program.programId}/webhooks/${created.body.data.endpoint.id}/test`,
      { cookie: owner.token, origin: BASE },
    );
    expect(sent.status).toBe(202);
    await expect.poll(async () => (await box.received()).length, { timeout: 10_000 }).toBe(1);
    const [got] = await box.received();
    const body = JSON.parse(got!.body);
    const validator = new Validator(bodySchema((await webhooksSection())[testEventType]), "2020-12", false);
    expect(validator.validate(body).errors).toEqual([]);
    expect(body).toMatchObject({
      type: testEventType,
      api_version: webhookApiVersion,
      data: { endpoint_id: created.body.data.endpoint.id, program_id: program.programId },
    });
  });
});
