/**
 * `npm run dev`: the whole service locally, offline (see `dev/local-stack.ts`).
 *
 * Environment:
 *   DEV_DATA_DIR   data folder (default `.dev-data`, git-ignored): PGlite data, builds, demo.json, keys
 *   PORT           HTTP port on 127.0.0.1 (default 8787; 0 picks a free one)
 *   DATABASE_URL   a `postgres://` URL uses that PostgreSQL instead of PGlite
 *   SQL_ENDPOINT_SECRET  the local SQL endpoint's secret (default: random per run), to send statements to
 *                  it yourself: `Neon-Connection-String: postgres://app:<secret>@db.localtest.me/app`
 *   UPSTASH_REDIS_REST_URL / UPSTASH_REDIS_REST_TOKEN   passed to the workers (else in-memory rate limits)
 *   STRIPE_WEBHOOK_SECRET   the events worker's signing secret (default: a fixed dev secret; set it to the
 *                  one `stripe listen` prints to forward real test-mode events)
 *   DEMO_STRIPE_ACCOUNT_ID  connect demo program 1 to this provider account (default `acct_demo_1`)
 *   OIDC_PORT      port of the local OpenID provider on 127.0.0.1 (default 8790; 0 picks a free one)
 *
 * Ctrl-C (SIGINT), SIGTERM or SIGHUP stop esbuild, Miniflare (workerd) and the SQL endpoint, then exit 0.
 */
import { relative, resolve } from "node:path";
import type { Demo } from "./seed.ts";

// Before anything imports wrangler or Miniflare.
process.env.WRANGLER_SEND_METRICS = "false";
process.env.WRANGLER_SEND_ERROR_REPORTS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

const { PROJECT_ROOT, startLocalStack } = await import("./local-stack.ts");
type Stack = Awaited<ReturnType<typeof startLocalStack>>;

const dataDir = resolve(PROJECT_ROOT, process.env.DEV_DATA_DIR || ".dev-data");
const port = parsePort(process.env.PORT);
const databaseUrl = process.env.DATABASE_URL;
const sqlSecret = process.env.SQL_ENDPOINT_SECRET;
const upstashUrl = process.env.UPSTASH_REDIS_REST_URL;
const upstashToken = process.env.UPSTASH_REDIS_REST_TOKEN;
const stripeWebhookSecret = process.env.STRIPE_WEBHOOK_SECRET;
const demoStripeAccountId = process.env.DEMO_STRIPE_ACCOUNT_ID;
const oidcPort = process.env.OIDC_PORT ? parsePort(process.env.OIDC_PORT, "OIDC_PORT") : 8790;
if (upstashUrl && !upstashToken) fail("UPSTASH_REDIS_REST_URL is set without UPSTASH_REDIS_REST_TOKEN");

let stack: Stack | undefined;
let shuttingDown = false;

// Our own handlers, installed first; the local stack removes the ones wrangler and Miniflare add.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    if (shuttingDown) {
      console.error(`\n${signal} again: exiting without waiting`);
      process.exit(1);
    }
    shuttingDown = true;
    console.log(`\n${signal}: stopping...`);
    void shutDown(0);
  });
}

async function shutDown(code: number): Promise<never> {
  // A signal during start-up waits for the start to settle, so nothing is left half-running.
  await starting.catch(() => {});
  try {
    await stack?.stop();
  } catch (err) {
    console.error("stop failed:", err);
    code = code || 1;
  }
  process.exit(code);
}

const starting = startLocalStack({
  dataDir,
  port,
  ...(databaseUrl ? { databaseUrl } : {}),
  ...(sqlSecret ? { sqlSecret } : {}),
  ...(upstashUrl && upstashToken ? { upstash: { url: upstashUrl, token: upstashToken } } : {}),
  ...(stripeWebhookSecret ? { stripeWebhookSecret } : {}),
  ...(demoStripeAccountId ? { demoStripeAccountId } : {}),
  oidcPort,
  watch: true,
  logLevel: "info",
  log: (message) => console.log(`[dev] ${message}`),
});

try {
  stack = await starting;
} catch (err) {
  console.error("[dev] failed to start:", err instanceof Error ? err.message : err);
  if (
    err instanceof Error &&
    /EADDRINUSE|address already in use/i.test(`${err.message} ${err.cause ?? ""}`)
  ) {
    console.error(`[dev] port ${port} is taken: set PORT to another port (or 0 for any free one)`);
  }
  process.exit(1);
}

if (!shuttingDown) printBanner(stack);

function printBanner(s: Stack): void {
  const lines = [
    "",
    `Affiliate tracking service: ${s.baseUrl}`,
    `  OpenAPI   ${s.baseUrl}/openapi.json   docs ${s.baseUrl}/docs`,
    `  dashboard ${s.baseUrl}/dashboard   (sign in as owner@demo-brand.example)`,
    `  database  ${s.sql.backend} via ${s.sql.url}`,
    `  data      ${relative(process.cwd(), dataDir) || "."}`,
  ];
  if (s.demo && s.demoFile) lines.push(...demoLines(s.demo, relative(process.cwd(), s.demoFile)));
  for (const worker of s.workers) {
    if (worker.crons.length === 0) continue;
    const cron = encodeURIComponent(worker.crons[0] ?? "");
    lines.push(
      `Cron (${worker.name}: ${worker.crons.join(", ")}) does not fire by itself locally; run it with`,
      `  curl -H 'MF-Route-Override: ${worker.name}' '${s.baseUrl}/cdn-cgi/handler/scheduled?cron=${cron}'`,
    );
  }
  lines.push("", "Ctrl-C stops everything.", "");
  console.log(lines.join("\n"));
}

function demoLines(demo: Demo, demoFile: string): string[] {
  const lines = ["", `Demo credentials (also in ${demoFile}):`];
  for (const p of demo.programs) {
    lines.push(
      `  program ${p.program_id} "${p.name}": ${p.lead_auth_policy}, ${p.commission_rate}% ${p.commission_type}, ` +
        `window ${p.attribution_window_days} d, hold ${p.hold_days} d`,
      `    api key       ${p.api_key}`,
      `    test api key  ${p.test_api_key}`,
      `    links         ${p.active_links.join(", ")} (disabled: ${p.disabled_link})`,
      `    provider      ${p.stripe_account_id}`,
      `    origins       ${p.allowed_origins.join(" ")}`,
    );
  }
  lines.push("", `Sign in: open ${demo.sign_in_url} (local OpenID provider ${demo.oidc_issuer ?? "-"}), as:`);
  for (const person of demo.people) {
    const notes = [person.blocked && "blocked", !person.provider_email_verified && "unverified email"].filter(
      Boolean,
    );
    lines.push(`  ${person.email}  ${person.role}${notes.length ? ` (${notes.join(", ")}: refused)` : ""}`);
  }
  const link = demo.programs[0]?.active_links[0] ?? "code-a";
  lines.push(
    "",
    "Try a click:",
    `  curl -s -X POST ${demo.base_url}/api/v1/track/click -H 'Content-Type: application/json' \\`,
    `    -d '{"affiliate_url":"https://shop.example/?aff=${link}"}'`,
    "",
    `Payments provider events: POST ${demo.stripe_events_url} (signing secret ${demo.stripe_webhook_secret})`,
    "  forward real test-mode events: stripe listen --forward-connect-to 127.0.0.1:" +
      `${new URL(demo.base_url).port}/webhooks/stripe, then restart with STRIPE_WEBHOOK_SECRET=<the whsec_ it prints>`,
    "  and DEMO_STRIPE_ACCOUNT_ID=<your connected test account's acct_...>",
  );
  return lines;
}

function parsePort(value: string | undefined, name = "PORT"): number {
  if (value === undefined || value === "") return 8787;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535)
    fail(`${name} must be a port number, not "${value}"`);
  return parsed;
}

function fail(message: string): never {
  console.error(`[dev] ${message}`);
  process.exit(1);
}
