import { SELF } from "cloudflare:test";
import createClient from "openapi-fetch";
import { beforeAll, describe, expect, it } from "vitest";
import type { paths } from "../../functions/api/generated/openapi-types.ts";
import { createProgram, freshIp, type ProgramFixture, unique } from "./harness.ts";
import {
  loadDocument,
  type OpenApiDocument,
  type Operation,
  operationsOf,
  responseProblems,
} from "./openapi-schemas.ts";

/**
 * The typed client generated from the OpenAPI document (`npm run openapi:types`, openapi-typescript, with
 * openapi-fetch) drives click -> lead -> sale -> refund against the worker, and every answer, success or
 * refusal, is validated against the document's schema for that operation and status: the document
 * describes what the service really answers.
 */
let document: OpenApiDocument;
let operations: Operation[];
let p: ProgramFixture;

beforeAll(async () => {
  document = await loadDocument(SELF);
  operations = operationsOf(document);
  p = await createProgram();
});

const client = createClient<paths>({
  baseUrl: "https://api.test",
  fetch: (request: Request) => SELF.fetch(request),
});

/** The response checked against the document for this operation and status. */
function documented(method: string, path: string, response: Response, body: unknown): void {
  const operation = operations.find((o) => o.method === method && o.path === path);
  expect(operation, `${method} ${path} is documented`).toBeDefined();
  expect(
    responseProblems(document, operation!, response.status, response.headers.get("Content-Type"), body),
  ).toEqual([]);
}

describe("the typed client generated from the OpenAPI document", () => {
  it("drives click -> lead -> sale -> refund, every answer as the document describes", async () => {
    const headers = { "CF-Connecting-IP": freshIp() };
    const auth = { Authorization: `Bearer ${p.apiKey}`, ...headers };

    const click = await client.POST("/api/v1/track/click", {
      body: { affiliate_url: `https://shop.example/?aff=${p.links[0]}` },
      headers,
    });
    expect(click.response.status).toBe(200);
    documented("POST", "/api/v1/track/click", click.response, click.data);
    const clickId = click.data!.click_id;

    const customerKey = unique("customer");
    const lead = await client.POST("/api/v1/track/lead", {
      body: { click_id: clickId, customer_key: customerKey, email: `${unique("buyer")}@example.com` },
      headers: auth,
    });
    expect(lead.response.status).toBe(200);
    documented("POST", "/api/v1/track/lead", lead.response, lead.data);

    const transactionId = unique("txn");
    const sale = await client.POST("/api/v1/track/sale", {
      body: {
        transaction_id: transactionId,
        amount_cents: 10_000,
        customer_key: customerKey,
        currency: "USD",
      },
      headers: auth,
    });
    expect(sale.response.status).toBe(200);
    documented("POST", "/api/v1/track/sale", sale.response, sale.data);

    const duplicate = await client.POST("/api/v1/track/sale", {
      body: { transaction_id: transactionId, amount_cents: 10_000, customer_key: customerKey },
      headers: auth,
    });
    expect(duplicate.response.status).toBe(409);
    documented("POST", "/api/v1/track/sale", duplicate.response, duplicate.error);

    const partial = await client.POST("/api/v1/track/refund", {
      body: { transaction_id: transactionId, amount_cents: 2_500 },
      headers: auth,
    });
    expect(partial.response.status).toBe(200);
    documented("POST", "/api/v1/track/refund", partial.response, partial.data);

    const full = await client.POST("/api/v1/track/refund", {
      body: { transaction_id: transactionId },
      headers: auth,
    });
    expect(full.response.status).toBe(200);
    documented("POST", "/api/v1/track/refund", full.response, full.data);

    const readiness = await client.GET("/api/v1/programs/me/readiness", { headers: auth });
    expect(readiness.response.status).toBe(200);
    documented("GET", "/api/v1/programs/me/readiness", readiness.response, readiness.data);
  });

  it.each([
    ["sale without a key", "/api/v1/track/sale", {}, { transaction_id: "t", amount_cents: 1 }, 401],
    ["sale with a bad amount", "/api/v1/track/sale", "key", { transaction_id: "t", amount_cents: -1 }, 400],
    ["refund of an unknown sale", "/api/v1/track/refund", "key", { transaction_id: "txn_unknown" }, 404],
    ["lead without ids", "/api/v1/track/lead", {}, {}, 400],
    ["click with a disabled link", "/api/v1/track/click", {}, "disabled", 410],
  ] as const)(
    "%s: the refusal is as the document describes",
    async (_name, path, credential, body, status) => {
      const headers = {
        "CF-Connecting-IP": freshIp(),
        ...(credential === "key" ? { Authorization: `Bearer ${p.apiKey}` } : {}),
      };
      const sent =
        body === "disabled"
          ? { affiliate_url: `https://shop.example/?aff=${p.disabledLink}` }
          : (body as object);
      // biome-ignore lint/suspicious/noExplicitAny: one table over several typed operations.
      const answer = await client.POST(path as any, { body: sent as any, headers });
      expect(answer.response.status).toBe(status);
      documented("POST", path, answer.response, answer.error);
    },
  );
});
