import { createExecutionContext, SELF, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { partners, programPartners, referralLinks } from "../../schema/index.ts";
import type { Credentials, FuzzRequest, KnownValues } from "./fuzz-arbitraries.ts";
import { db, freshIp, postJson, unique } from "./harness.ts";
import type { OpenApiDocument, Operation } from "./openapi-schemas.ts";
import { responseProblems } from "./openapi-schemas.ts";
import { ownerWithProgram } from "./program-admin-harness.ts";
import worker from "./routed-workers.ts";

/**
 * What the fuzzer aims at: a signed-in owner's program with a partner, links, a click, a settled lead and
 * a sale, so generated requests can name things that exist; and the checks every answer must pass.
 */
export interface FuzzTarget {
  programId: number;
  advertiserId: number;
  userId: number;
  credentials: Credentials;
  known: KnownValues;
}

export async function fuzzTarget(): Promise<FuzzTarget> {
  const owner = await ownerWithProgram();
  const [partner] = await db
    .insert(partners)
    .values({ name: "Fuzz partner", email: `${unique("p")}@partners.example` })
    .returning();
  await db.insert(programPartners).values({ programId: owner.programId, partnerId: partner!.id });
  const code = unique("fuzz");
  const [link] = await db
    .insert(referralLinks)
    .values({ programId: owner.programId, partnerId: partner!.id, shortLink: code })
    .returning();
  const landing = `https://shop.example.com/?aff=${code}`;
  const click = await postJson("/api/v1/track/click", { affiliate_url: landing });
  const clickId = click.body.click_id as string;
  const customerKey = unique("customer");
  const auth = { Authorization: `Bearer ${owner.apiKey}` };
  const lead = await postJson("/api/v1/track/lead", { click_id: clickId, customer_key: customerKey }, auth);
  const transactionId = unique("txn");
  const sale = await postJson(
    "/api/v1/track/sale",
    { transaction_id: transactionId, amount_cents: 5000, customer_key: customerKey },
    auth,
  );
  if (click.status !== 200 || lead.status !== 200 || sale.status !== 200) {
    throw new Error(`fixture flow failed: ${click.status} ${lead.status} ${sale.status}`);
  }
  return {
    programId: owner.programId,
    advertiserId: owner.advertiserId,
    userId: owner.userId,
    credentials: { apiKey: owner.apiKey, testApiKey: owner.testApiKey, sessionToken: owner.token },
    known: {
      id: [owner.programId],
      programId: [owner.programId],
      program_id: [owner.programId],
      linkId: [link!.id],
      affiliate_url: [landing],
      click_id: [clickId],
      customer_key: [customerKey],
      transaction_id: [transactionId],
      email: [`${unique("buyer")}@example.com`],
      advertiser_id: [owner.advertiserId],
    },
  };
}

/** Rows a request could write for the fuzzed program, its workspace and its owner. */
export async function rowCounts(target: FuzzTarget): Promise<Record<string, number>> {
  const { programId: p, advertiserId: a, userId: u } = target;
  const result = await db.execute<Record<string, string>>(sql`
    select
      (select count(*) from affiliate_click_events where program_id = ${p}) as clicks,
      (select count(*) from affiliate_lead_events where program_id = ${p}) as leads,
      (select count(*) from affiliate_sale_events where program_id = ${p}) as sales,
      (select count(*) from affiliate_visit_events where program_id = ${p}) as visits,
      (select count(*) from customers where program_id = ${p}) as customers,
      (select count(*) from commissions where program_id = ${p}) as commissions,
      (select count(*) from refunds where program_id = ${p}) as refunds,
      (select count(*) from program_api_keys where program_id = ${p}) as api_keys,
      (select count(*) from referral_links where program_id = ${p}) as links,
      (select count(*) from program_partners where program_id = ${p}) as program_partners,
      (select count(*) from cli_synthetic_chains where program_id = ${p}) as synthetic_chains,
      (select count(*) from programs where advertiser_id = ${a}) as programs,
      (select count(*) from workspace_members where advertiser_id = ${a}) as members,
      (select count(*) from sign_in_tokens where user_id = ${u}) as sign_in_tokens,
      (select count(*) from cli_login_tokens where user_id = ${u}) as cli_tokens`);
  return Object.fromEntries(Object.entries(result.rows[0]!).map(([k, v]) => [k, Number(v)]));
}

const statusNames: Record<number, string> = {
  400: "BadRequestError",
  401: "UnauthorizedError",
  403: "ForbiddenError",
  404: "NotFoundError",
  409: "ConflictError",
  410: "GoneError",
  413: "PayloadTooLargeError",
  422: "UnprocessableEntityError",
  500: "InternalServerError",
};

/** Spec section 8: the routes with a rate limit, whose every answer carries the X-RateLimit-* headers. */
const limitedRoutes = [
  "POST /api/v1/track/click",
  "POST /api/v1/track/visit",
  "GET /api/v1/track/config",
  "POST /api/v1/track/lead",
  "POST /api/v1/track/sale",
  "POST /api/v1/track/refund",
  "GET /api/v1/programs/me/readiness",
  "GET /api/v1/programs/me/analytics/sources",
  "GET /api/v1/programs/{id}/settings",
  "PATCH /api/v1/programs/{id}/settings",
];

function templateMatches(template: string, pathname: string): boolean {
  const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
  return pattern.test(pathname);
}

/** The operation the service routes this method and path to (literal paths before templated ones). */
export function routedOperation(
  operations: Operation[],
  method: string,
  pathname: string,
): Operation | undefined {
  const candidates = operations.filter((o) => o.method === method && templateMatches(o.path, pathname));
  return candidates.sort((x, y) => x.path.split("{").length - y.path.split("{").length)[0];
}

export interface Answer {
  status: number;
  headers: Headers;
  contentType: string | null;
  body: unknown;
  text: string;
}

/**
 * `via: "entrypoint"` (CI's run) sends through the runtime's entrypoint, as a client's request arrives.
 * `via: "handler"` (a long run) calls the worker's fetch handler with the test's env and a fresh execution
 * context: `@cloudflare/vitest-pool-workers` 0.15.1 wraps the entrypoint class's prototype in one more Proxy
 * on every construction (cloudflare/workers-sdk issue 15092), so each `SELF.fetch` makes every later one
 * slower and after about 1,800 of them they throw `RangeError: Maximum call stack size exceeded`.
 */
export async function send(
  request: FuzzRequest,
  via: "entrypoint" | "handler" = "entrypoint",
): Promise<Answer> {
  const init: RequestInit = {
    method: request.method,
    headers: request.headers,
    redirect: "manual",
    ...(request.body !== undefined ? { body: request.body } : {}),
  };
  let response: Response;
  if (via === "entrypoint") {
    response = await SELF.fetch(request.url, init);
  } else {
    const context = createExecutionContext();
    response = await worker.fetch(new Request(request.url, init), env, context);
    await waitOnExecutionContext(context);
  }
  const text = await response.text();
  const contentType = response.headers.get("Content-Type");
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, contentType, body, text };
}

/**
 * The properties every answer holds: never a 5xx; a documented status whose body validates against the
 * document's schema; the error envelope of its route family (spec section 7); the rate-limit headers on the
 * limited routes (section 8); `X-Request-ID` on tracking, readiness and command-line answers.
 */
export function answerProblems(
  document: OpenApiDocument,
  operations: Operation[],
  method: string,
  url: string,
  answer: Answer,
): string[] {
  const problems: string[] = [];
  const { status, headers, body } = answer;
  const pathname = new URL(url).pathname;
  if (status >= 500) problems.push(`answered ${status}`);
  const operation = routedOperation(operations, method, pathname);
  if (status >= 400 && !answer.contentType?.includes("application/json")) {
    problems.push(`error answer is ${answer.contentType}, not JSON`);
  }
  // biome-ignore lint/suspicious/noExplicitAny: the envelope is checked field by field.
  const error = (body as any)?.error;
  if (status >= 400) {
    const typed =
      status === 429 ||
      // Readiness (its key check runs for any method) answers typed; a method it does not serve past the
      // key check is the app's platform 404.
      (pathname === "/api/v1/programs/me/readiness" && status !== 404) ||
      (pathname === "/api/v1/track/click" && status === 410) ||
      error?.code === "api_key_rotation_required";
    if (typed) {
      if (
        typeof error?.code !== "string" ||
        typeof error?.message !== "string" ||
        "data" in (body as object)
      ) {
        problems.push(`not the typed envelope: ${answer.text.slice(0, 200)}`);
      }
    } else if (
      (body as { data?: unknown })?.data !== null ||
      error?.status !== status ||
      error?.name !== statusNames[status] ||
      typeof error?.message !== "string" ||
      typeof error?.details !== "object"
    ) {
      problems.push(`not the platform envelope: ${answer.text.slice(0, 200)}`);
    }
    if (status === 429) {
      if (error?.code !== "rate_limited" || !Number.isInteger(error?.retry_after_seconds)) {
        problems.push(`429 without rate_limited and retry_after_seconds: ${answer.text.slice(0, 200)}`);
      }
      if (!headers.get("Retry-After")) problems.push("429 without Retry-After");
    }
    const stableCodes = ["/api/v1/track/sale", "/api/v1/track/refund"].includes(pathname);
    if (stableCodes && operation && status !== 429 && typeof error?.code !== "string") {
      problems.push(`sale/refund error without error.code: ${answer.text.slice(0, 200)}`);
    }
  }
  if (!operation) {
    // A method or path no route serves: 404, or a refusal a middleware of that path gives first; the retired
    // command-line endpoint answers its 410 whatever the method (spec: "always 410").
    const retired = pathname === "/api/v1/cli/stripe-connect" && status === 410;
    if (![401, 403, 404, 413, 429].includes(status) && !retired) {
      problems.push(`unrouted ${method} ${pathname} answered ${status}`);
    }
    return problems;
  }
  problems.push(...responseProblems(document, operation, status, answer.contentType, body));
  const route = `${operation.method} ${operation.path}`;
  if (limitedRoutes.includes(route)) {
    for (const name of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]) {
      if (!/^\d+$/.test(headers.get(name) ?? ""))
        problems.push(`${route} answered ${status} without ${name}`);
    }
  }
  const quietStatus = route === "GET /api/v1/cli/status" && [200, 401, 429].includes(status);
  const withRequestId =
    pathname.startsWith("/api/v1/track/") ||
    pathname.startsWith("/api/v1/cli/") ||
    pathname === "/api/v1/programs/me/readiness";
  if (withRequestId && !quietStatus && !headers.get("X-Request-ID")) {
    problems.push(`${route} answered ${status} without X-Request-ID`);
  }
  return problems;
}

/** Refusals that the spec says may have written rows: none other than these. */
export function refusalMayWrite(route: string, status: number, body: unknown): boolean {
  // biome-ignore lint/suspicious/noExplicitAny: reading the message of an envelope.
  const message = (body as any)?.error?.message;
  return (
    (route === "POST /api/v1/track/sale" && message === "partnerId required to create commission") ||
    (route === "POST /api/v1/cli/test-event" && status === 429)
  );
}

export { freshIp };
