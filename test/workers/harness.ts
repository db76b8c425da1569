import { createExecutionContext, SELF, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { issueApiKey } from "../../lib/auth/api-keys.ts";
import { readConfig } from "../../lib/config/env.ts";
import { databaseFor } from "../../lib/db/client.ts";
import type { WorkerBindings } from "../../lib/http/app-env.ts";
import {
  advertisers,
  clickEvents,
  partners,
  programApiKeys,
  programPartners,
  programs,
  referralLinks,
} from "../../schema/index.ts";
import type { CommissionType, LeadAuthPolicy } from "../../schema/programs.ts";

export const db = databaseFor(readConfig(env));

export function unique(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 12)}`;
}

export interface ProgramFixture {
  programId: number;
  apiKey: string;
  testApiKey: string;
  partnerIds: [number, number];
  /** Two active links of two different partners. */
  links: [string, string];
  disabledLink: string;
  linkWithoutPartner: string;
  attributionWindowDays: number;
  origin: string;
  /** The program's workspace. */
  advertiserId: number;
}

/**
 * Each test makes its own program, partners, links and keys (random codes), so tests never depend on
 * one another, on seeded ids or on their order.
 */
export async function createProgram(
  options: {
    attributionWindowDays?: number;
    leadAuthPolicy?: LeadAuthPolicy;
    commissionType?: CommissionType;
    commissionRate?: string;
    holdDays?: number;
    allowedOrigins?: string[];
    /** A workspace of an earlier fixture (`advertiserId`): two programs of one brand. Unset: a new one. */
    advertiserId?: number;
  } = {},
): Promise<ProgramFixture> {
  const origin = `https://${unique("shop")}.example`;
  const advertiserId =
    options.advertiserId ??
    (
      await db
        .insert(advertisers)
        .values({ name: unique("brand") })
        .returning()
    )[0]!.id;
  const [program] = await db
    .insert(programs)
    .values({
      advertiserId,
      name: unique("program"),
      domain: new URL(origin).hostname,
      attributionWindowDays: options.attributionWindowDays ?? 60,
      leadAuthPolicy: options.leadAuthPolicy ?? "server_required",
      commissionType: options.commissionType ?? "percent",
      commissionRate: options.commissionRate ?? "20",
      holdDays: options.holdDays ?? 0,
      allowedOrigins: options.allowedOrigins ?? [origin],
    })
    .returning();
  const programId = program!.id;
  const partnerRows = await db
    .insert(partners)
    .values([
      { name: "Partner A", email: `${unique("a")}@partners.example` },
      { name: "Partner B", email: `${unique("b")}@partners.example` },
    ])
    .returning();
  const partnerIds: [number, number] = [partnerRows[0]!.id, partnerRows[1]!.id];
  await db.insert(programPartners).values(partnerIds.map((partnerId) => ({ programId, partnerId })));
  const links: [string, string] = [unique("code-a"), unique("code-b")];
  const disabledLink = unique("code-off");
  const linkWithoutPartner = unique("code-orphan");
  await db.insert(referralLinks).values([
    { programId, partnerId: partnerIds[0], shortLink: links[0] },
    { programId, partnerId: partnerIds[1], shortLink: links[1] },
    { programId, partnerId: partnerIds[0], shortLink: disabledLink, isActive: false, disabledAt: new Date() },
    { programId, partnerId: null, shortLink: linkWithoutPartner },
  ]);
  const live = await issueApiKey(false);
  const test = await issueApiKey(true);
  await db.insert(programApiKeys).values([
    { programId, keyHash: live.keyHash, keyPrefix: live.keyPrefix, isTest: false },
    { programId, keyHash: test.keyHash, keyPrefix: test.keyPrefix, isTest: true },
  ]);
  return {
    programId,
    apiKey: live.key,
    testApiKey: test.key,
    partnerIds,
    links,
    disabledLink,
    linkWithoutPartner,
    attributionWindowDays: options.attributionWindowDays ?? 60,
    origin,
    advertiserId,
  };
}

export async function clicksOfProgram(programId: number) {
  return db.select().from(clickEvents).where(eq(clickEvents.programId, programId)).orderBy(clickEvents.id);
}

/** A fresh client IP per call site, so per-IP rate limits of parallel tests never meet. */
export function freshIp(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(3));
  return `10.${bytes[0]}.${bytes[1]}.${bytes[2]}`;
}

/** A worker's default export, called directly rather than through SELF. */
export interface DirectWorker {
  fetch(request: Request, bindings: WorkerBindings, ctx: ExecutionContext): Response | Promise<Response>;
}

/**
 * Calls `worker` directly with `bindings` in place of the test bindings (a missing or changed one), from a
 * fresh IP unless `init` names one, and waits for its after-response work.
 */
export async function fetchWorker(
  worker: DirectWorker,
  path: string,
  init: RequestInit = {},
  bindings: WorkerBindings = env,
): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`https://api.test${path}`, {
      ...init,
      headers: { "CF-Connecting-IP": freshIp(), "Content-Type": "application/json", ...init.headers },
    }),
    bindings,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return response;
}

export async function postJson(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await SELF.fetch(`https://api.test${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "CF-Connecting-IP": freshIp(), ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
}
