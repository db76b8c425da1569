/**
 * Which parts of a stored provider event (`stripe_events.payload`) identify a person: the buyer's email,
 * name, phone, addresses, tax ids, card details and a dispute's evidence. Replay needs them while the event
 * may still be replayed; the retention job (`payload-retention.ts`) removes them after that.
 *
 * Paths are relative to the event's `data.object` and to `data.previous_attributes` (an update event repeats
 * changed fields there). What stays: ids (event, session, invoice, charge, PaymentIntent, the provider's
 * `cus_...` customer id), amounts, currencies, statuses, times, and the metadata keys the attribution reads
 * except the brand's customer key.
 */
export const personalFieldPaths: readonly (readonly string[])[] = [
  // Checkout Session
  ["customer_details"],
  ["customer_email"],
  ["shipping_details"],
  ["collected_information"],
  ["shipping_address_collection"],
  ["custom_fields"],
  // Invoice
  ["customer_name"],
  ["customer_phone"],
  ["customer_address"],
  ["customer_shipping"],
  ["customer_tax_ids"],
  ["account_name"],
  // Charge, PaymentIntent
  ["billing_details"],
  ["receipt_email"],
  ["receipt_url"],
  ["shipping"],
  ["payment_method_details"],
  // Dispute
  ["evidence"],
];

/**
 * The metadata keys kept (they carry our own ids, not the buyer's); every other metadata key is the brand's
 * and may hold anything, `service_customer_key` included (often an email), so it goes.
 */
export const keptMetadataKeys: ReadonlySet<string> = new Set(["service_click_id", "program_id"]);

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function removePath(target: Json, path: readonly string[]): void {
  let node: unknown = target;
  for (const key of path.slice(0, -1)) {
    if (!isObject(node)) return;
    node = node[key];
  }
  const last = path[path.length - 1];
  if (isObject(node) && last !== undefined) delete node[last];
}

function redactObject(object: unknown): void {
  if (!isObject(object)) return;
  for (const path of personalFieldPaths) removePath(object, path);
  const metadata = object.metadata;
  if (isObject(metadata)) {
    for (const key of Object.keys(metadata)) if (!keptMetadataKeys.has(key)) delete metadata[key];
  }
}

/**
 * The event body without its personal fields, as JSON text; null when the body is not a JSON object (it
 * cannot be redacted field by field, so it is not kept at all).
 */
export function redactPersonalFields(payload: string): string | null {
  let event: unknown;
  try {
    event = JSON.parse(payload);
  } catch {
    return null;
  }
  if (!isObject(event)) return null;
  const data = event.data;
  if (isObject(data)) {
    redactObject(data.object);
    redactObject(data.previous_attributes);
  }
  return JSON.stringify(event);
}
