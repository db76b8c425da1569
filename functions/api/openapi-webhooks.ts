import { testEventType, webhookApiVersion, type webhookEventTypes } from "../../lib/webhooks/event-types.ts";

/**
 * The OpenAPI 3.1 `webhooks` section: what the service POSTs to a brand's endpoint for each event type
 * (README "Webhooks to your backend"). Written as JSON Schema beside the payload builders
 * (`lib/webhooks/outbox-statements.ts`), whose `jsonb_build_object` keys these list.
 */
type Schema = Record<string, unknown>;

const int = { type: "integer" } as const;
const str = { type: "string" } as const;
const time = { type: "string", format: "date-time" } as const;
const nullable = (s: Schema) => ({ ...s, type: [s.type as string, "null"] });

const commission: Schema = {
  commission_id: int,
  sale_id: int,
  program_id: int,
  partner_id: int,
  status: { type: "string", enum: ["pending", "approved", "paid", "refunded", "reversed"] },
  amount_cents: { ...int, description: "The original commission, in minor units" },
  deducted_cents: { ...int, description: "Taken back by refunds so far" },
  net_amount_cents: { ...int, description: "amount_cents - deducted_cents" },
  currency: str,
  hold_until: nullable(time),
  is_test: { type: "boolean" },
};

const dataByType: Record<(typeof webhookEventTypes)[number], { summary: string; properties: Schema }> = {
  "lead.created": {
    summary: "A lead was recorded (provisional ones too, flagged)",
    properties: {
      lead_id: int,
      program_id: int,
      partner_id: nullable(int),
      customer_id: nullable(int),
      click_id: nullable(str),
      customer_key: nullable(str),
      event_name: nullable(str),
      provisional: { type: "boolean" },
      is_test: { type: "boolean" },
      created_at: time,
    },
  },
  "sale.created": {
    summary: "A sale was recorded",
    properties: {
      sale_id: int,
      program_id: int,
      partner_id: nullable(int),
      customer_id: nullable(int),
      transaction_id: str,
      amount_cents: int,
      tax_cents: int,
      currency: str,
      product_id: nullable(str),
      is_test: { type: "boolean" },
      created_at: time,
    },
  },
  "commission.created": { summary: "A sale earned a partner commission", properties: commission },
  "commission.updated": {
    summary:
      "A refund, chargeback or payment reversal reduced or cancelled a commission, or a fraud review rejected it",
    properties: {
      ...commission,
      reason: { type: "string", enum: ["refund", "chargeback", "fraud_review"] },
      refund: {
        type: ["object", "null"],
        description: "null for `fraud_review` (the held commission reversed whole, nothing credited)",
        properties: {
          refund_id: nullable(str),
          amount_cents: { ...int, description: "This refund's amount" },
          refunded_total_cents: { ...int, description: "The sale's refunded total after it" },
          deduction_cents: { ...int, description: "Taken from the partner's balance by it" },
        },
      },
    },
  },
  "commission.approved": {
    summary: "A commission's hold period ended and it was approved, or a fraud review approved it",
    properties: { ...commission, approved_at: time },
  },
  "link.disabled": {
    summary: "A referral link was turned off",
    properties: {
      link_id: int,
      program_id: int,
      partner_id: nullable(int),
      short_link: str,
      disabled_at: time,
    },
  },
};

/** Sent only by "send test event", to the one endpoint it names, whatever that endpoint subscribes to. */
const testEvent = {
  summary: "A test event from the webhook settings (POST .../webhooks/{endpointId}/test)",
  properties: { endpoint_id: int, program_id: int, message: str },
};

const signatureHeaders = [
  { name: "webhook-id", description: "The event id (`msg_...`), the same on every retry: dedupe on it" },
  { name: "webhook-timestamp", description: "Unix seconds of this attempt; reject ones far from now" },
  {
    name: "webhook-signature",
    description:
      '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` keyed with the secret\'s ' +
      "base64 part; during a secret rotation's overlap, two such signatures separated by a space",
  },
].map((h) => ({ in: "header", required: true, schema: str, ...h }));

export function webhooksSection(): Record<string, unknown> {
  return Object.fromEntries(
    [...Object.entries(dataByType), [testEventType, testEvent] as const].map(
      ([type, { summary, properties }]) => [
        type,
        {
          post: {
            operationId: `webhook${type.replace(/(^|\.)(\w)/g, (_m, _d, ch: string) => ch.toUpperCase())}`,
            summary,
            description:
              (type === testEventType
                ? "Sent to the one endpoint named, whatever it subscribes to"
                : "Sent to every enabled endpoint subscribed to this event") +
              ", signed per Standard Webhooks, at least once; retried with exponential backoff for three days " +
              "until the endpoint answers 2xx.",
            tags: ["Webhooks"],
            // Sent by the service, not called by anyone: the signature headers are its authentication.
            security: [],
            parameters: signatureHeaders,
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    required: ["type", "api_version", "id", "created_at", "data"],
                    properties: {
                      type: { type: "string", const: type },
                      api_version: {
                        type: "string",
                        const: webhookApiVersion,
                        description:
                          "The payload version (a date). It changes only when a `data` shape changes incompatibly " +
                          "(a field removed, renamed or retyped); new fields are added without a change, so " +
                          "ignore fields you do not know. A new version is announced in this document first.",
                      },
                      id: { type: "string", description: "The event id, equal to the webhook-id header" },
                      created_at: time,
                      data: { type: "object", properties },
                    },
                  },
                },
              },
            },
            responses: {
              "200": { description: "Any 2xx acknowledges the delivery; anything else is retried" },
            },
          },
        },
      ],
    ),
  );
}
