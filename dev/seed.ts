/**
 * Demo data for the local stack: one advertiser, two programs, two partners per program with one active
 * link each, one disabled link per program, a live and a test API key per program, and each program
 * connected to a demo payments-provider account (`acct_demo_1`, `acct_demo_2`).
 *
 * Idempotent: rows are found by natural keys (advertiser and program names, partner emails, link codes)
 * and updated to the values below, so a second run creates nothing new. Keys exist in the database only as
 * hashes; the clear keys are kept in `<dataDir>/demo-keys.json` (git-ignored with the data folder) and
 * reused while their hashes are still live, otherwise new ones are issued and the old demo keys revoked.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { issueApiKey, sha256Hex } from "../lib/auth/api-keys.ts";
import { DEMO_PEOPLE } from "./demo-people.ts";
import type { SqlEndpoint } from "./sql-endpoint.ts";

/** Also the local stack's default (`dev/local-stack.ts`): kept here so the seed needs no Miniflare. */
export const DEV_STRIPE_WEBHOOK_SECRET = "whsec_dev_local_stack_0000000000000000";

export interface DemoProgram {
  program_id: number;
  name: string;
  api_key: string;
  test_api_key: string;
  lead_auth_policy: "server_required" | "browser_allowed";
  attribution_window_days: number;
  commission_type: string;
  commission_rate: number;
  hold_days: number;
  /** Two links of two different partners. */
  active_links: [string, string];
  disabled_link: string;
  allowed_origins: string[];
  /** The connected provider account whose events (signed with `stripe_webhook_secret`) record this program's sales. */
  stripe_account_id: string;
}

export interface Demo {
  base_url: string;
  sql_endpoint_url: string;
  /** Where the payments provider's events go: `<base_url>/webhooks/stripe`. */
  stripe_events_url: string;
  /** The events worker's signing secret (for `stripe listen`-style forwarding or signing events yourself). */
  stripe_webhook_secret: string;
  programs: DemoProgram[];
  /** The local OpenID provider (when the stack runs one) and where a person starts signing in. */
  oidc_issuer?: string;
  sign_in_url: string;
  /** Sign in as one of these on the local provider's page (type the email, choose verified or not). */
  people: { email: string; role: string; provider_email_verified: boolean; blocked: boolean }[];
}

export interface SeedOptions {
  /** The API's base URL, e.g. `http://127.0.0.1:8787`; its origin is one of the allowed origins. */
  baseUrl: string;
  /** Where `demo-keys.json` lives. */
  dataDir: string;
  /** The events worker's signing secret, reported in demo.json. Default: the local stack's dev secret. */
  stripeWebhookSecret?: string;
  /** Connect the first demo program to this provider account instead of `acct_demo_1` (a real test account). */
  stripeAccountId?: string;
  /** The local OpenID provider's issuer, reported in demo.json. */
  oidcIssuer?: string;
}

interface PartnerSpec {
  name: string;
  email: string;
  link: string;
}

interface ProgramSpec {
  name: string;
  domain: string;
  leadAuthPolicy: DemoProgram["lead_auth_policy"];
  attributionWindowDays: number;
  commissionType: "percent";
  commissionRate: number;
  holdDays: number;
  stripeAccountId: string;
  partners: [PartnerSpec, PartnerSpec];
  /** Belongs to the first partner. */
  disabledLink: string;
}

export const DEMO_ADVERTISER = "Demo advertiser";

export const DEMO_PROGRAMS: readonly ProgramSpec[] = [
  {
    name: "Demo program 1",
    domain: "shop-one.example",
    leadAuthPolicy: "server_required",
    attributionWindowDays: 60,
    commissionType: "percent",
    commissionRate: 20,
    holdDays: 0,
    stripeAccountId: "acct_demo_1",
    partners: [
      { name: "Demo Partner A", email: "demo-partner-a@partners.example", link: "code-a" },
      { name: "Demo Partner B", email: "demo-partner-b@partners.example", link: "code-b" },
    ],
    disabledLink: "code-off",
  },
  {
    name: "Demo program 2",
    domain: "shop-two.example",
    leadAuthPolicy: "browser_allowed",
    attributionWindowDays: 60,
    commissionType: "percent",
    commissionRate: 20,
    holdDays: 30,
    stripeAccountId: "acct_demo_2",
    partners: [
      { name: "Demo Partner C", email: "demo-partner-c@partners.example", link: "code-c" },
      { name: "Demo Partner D", email: "demo-partner-d@partners.example", link: "code-d" },
    ],
    disabledLink: "code-off-2",
  },
];

const KEYS_FILE = "demo-keys.json";

interface StoredKeys {
  programs: Record<string, { program_id: number; api_key: string; test_api_key: string }>;
}

type Query = Pick<SqlEndpoint, "query" | "url">;

export function demoOrigins(baseUrl: string): string[] {
  const port = new URL(baseUrl).port;
  const candidates = [
    `http://localhost:${port}`,
    `http://127.0.0.1:${port}`,
    "http://localhost:3000",
    baseUrl,
  ];
  // Stored exactly as browsers send them (`new URL(x).origin`), without duplicates.
  return [...new Set(candidates.map((value) => new URL(value).origin))];
}

export async function seedDemo(endpoint: Query, options: SeedOptions): Promise<Demo> {
  const allowedOrigins = demoOrigins(options.baseUrl);
  const stored = await readStoredKeys(options.dataDir);
  const next: StoredKeys = { programs: {} };

  const advertiserId = await findOrCreateAdvertiser(endpoint, DEMO_ADVERTISER);
  const programs: DemoProgram[] = [];
  for (const spec of DEMO_PROGRAMS) {
    const connected =
      spec === DEMO_PROGRAMS[0] && options.stripeAccountId
        ? { ...spec, stripeAccountId: options.stripeAccountId }
        : spec;
    const program = await upsertProgram(endpoint, advertiserId, connected, allowedOrigins);
    const partnerIds: number[] = [];
    for (const partner of spec.partners) {
      const partnerId = await upsertPartner(endpoint, partner);
      partnerIds.push(partnerId);
      await endpoint.query(
        `insert into program_partners (program_id, partner_id, status) values ($1, $2, 'active')
         on conflict (program_id, partner_id) do update set status = 'active'`,
        [program.id, partnerId],
      );
      await upsertLink(endpoint, { code: partner.link, programId: program.id, partnerId, active: true });
    }
    await upsertLink(endpoint, {
      code: spec.disabledLink,
      programId: program.id,
      partnerId: partnerIds[0] as number,
      active: false,
    });

    const previous = stored.programs[spec.name];
    const reusable = previous?.program_id === program.id ? previous : undefined;
    const apiKey = await ensureKey(endpoint, program.id, false, reusable?.api_key);
    const testApiKey = await ensureKey(endpoint, program.id, true, reusable?.test_api_key);
    next.programs[spec.name] = { program_id: program.id, api_key: apiKey, test_api_key: testApiKey };

    programs.push({
      program_id: program.id,
      name: spec.name,
      api_key: apiKey,
      test_api_key: testApiKey,
      lead_auth_policy: program.leadAuthPolicy,
      attribution_window_days: program.attributionWindowDays,
      commission_type: program.commissionType,
      commission_rate: program.commissionRate,
      hold_days: program.holdDays,
      active_links: [spec.partners[0].link, spec.partners[1].link],
      disabled_link: spec.disabledLink,
      allowed_origins: program.allowedOrigins,
      stripe_account_id: program.stripeAccountId,
    });
  }

  await writeStoredKeys(options.dataDir, next);
  await seedPeople(endpoint, advertiserId);
  return {
    base_url: options.baseUrl,
    sql_endpoint_url: endpoint.url,
    stripe_events_url: `${options.baseUrl}/webhooks/stripe`,
    stripe_webhook_secret: options.stripeWebhookSecret ?? DEV_STRIPE_WEBHOOK_SECRET,
    programs,
    ...(options.oidcIssuer ? { oidc_issuer: options.oidcIssuer } : {}),
    sign_in_url: `${options.baseUrl}/api/v1/auth/sign-in`,
    people: DEMO_PEOPLE.map((p) => ({
      email: p.email,
      role: p.role,
      provider_email_verified: p.providerEmailVerified,
      blocked: p.blocked,
    })),
  };
}

/** The demo people as users and active members of the demo advertiser (blocked one included). */
async function seedPeople(endpoint: Query, advertiserId: number): Promise<void> {
  for (const person of DEMO_PEOPLE) {
    const user = await endpoint.query(
      `insert into users (email, email_verified, blocked_at) values ($1, $2::boolean, case when $3::boolean then now() end)
       on conflict ((lower(email))) do update
          set blocked_at = case when $3::boolean then coalesce(users.blocked_at, now()) end
       returning id`,
      [person.email, person.providerEmailVerified, person.blocked],
    );
    await endpoint.query(
      `insert into workspace_members (advertiser_id, user_id, role, status) values ($1, $2, $3, 'active')
       on conflict (advertiser_id, user_id) do update set role = excluded.role, status = 'active'`,
      [advertiserId, required(user.rows[0], "user upsert").id, person.role],
    );
  }
}

async function findOrCreateAdvertiser(endpoint: Query, name: string): Promise<number> {
  const found = await endpoint.query("select id from advertisers where name = $1 order by id limit 1", [
    name,
  ]);
  const existing = found.rows[0];
  if (existing) return Number(existing.id);
  const created = await endpoint.query("insert into advertisers (name) values ($1) returning id", [name]);
  return Number(required(created.rows[0], "advertiser insert").id);
}

interface ProgramRow {
  id: number;
  leadAuthPolicy: DemoProgram["lead_auth_policy"];
  attributionWindowDays: number;
  commissionType: string;
  commissionRate: number;
  holdDays: number;
  allowedOrigins: string[];
  stripeAccountId: string;
}

async function upsertProgram(
  endpoint: Query,
  advertiserId: number,
  spec: ProgramSpec,
  allowedOrigins: string[],
): Promise<ProgramRow> {
  const found = await endpoint.query(
    "select id from programs where advertiser_id = $1 and name = $2 order by id limit 1",
    [advertiserId, spec.name],
  );
  let id = found.rows[0]?.id;
  if (id === undefined) {
    const created = await endpoint.query(
      `insert into programs (advertiser_id, name, domain, commission_rate) values ($1, $2, $3, $4) returning id`,
      [advertiserId, spec.name, spec.domain, spec.commissionRate],
    );
    id = required(created.rows[0], "program insert").id;
  }
  // Reset the demo settings on every run: demo.json describes them, so they must hold.
  const updated = await endpoint.query(
    `update programs
        set domain = $2, lead_auth_policy = $3, attribution_window_days = $4, commission_type = $5,
            commission_rate = $6, duration_months = 0, hold_days = $7, allowed_origins = $8::text[],
            stripe_account_id = $9, updated_at = now()
      where id = $1
      returning id, lead_auth_policy, attribution_window_days, commission_type, commission_rate, hold_days,
                array_to_json(allowed_origins) as allowed_origins, stripe_account_id`,
    [
      id,
      spec.domain,
      spec.leadAuthPolicy,
      spec.attributionWindowDays,
      spec.commissionType,
      spec.commissionRate,
      spec.holdDays,
      allowedOrigins,
      spec.stripeAccountId,
    ],
  );
  const row = required(updated.rows[0], "program update");
  return {
    id: Number(row.id),
    leadAuthPolicy: String(row.lead_auth_policy) as ProgramRow["leadAuthPolicy"],
    attributionWindowDays: Number(row.attribution_window_days),
    commissionType: String(row.commission_type),
    commissionRate: Number(row.commission_rate),
    holdDays: Number(row.hold_days),
    allowedOrigins: JSON.parse(String(row.allowed_origins)) as string[],
    stripeAccountId: String(row.stripe_account_id),
  };
}

async function upsertPartner(endpoint: Query, partner: PartnerSpec): Promise<number> {
  const result = await endpoint.query(
    `insert into partners (name, email) values ($1, $2)
     on conflict ((lower(email))) do update set name = excluded.name
     returning id`,
    [partner.name, partner.email],
  );
  return Number(required(result.rows[0], "partner upsert").id);
}

async function upsertLink(
  endpoint: Query,
  link: { code: string; programId: number; partnerId: number; active: boolean },
): Promise<void> {
  // Codes are unique across the service; a demo code held by another program is left alone and reported.
  const result = await endpoint.query(
    `insert into referral_links (program_id, partner_id, short_link, is_active, disabled_at)
     values ($1, $2, $3, $4::boolean, case when $4::boolean then null else now() end)
     on conflict (short_link) do update
        set partner_id = excluded.partner_id,
            is_active = excluded.is_active,
            disabled_at = case when excluded.is_active then null
                               else coalesce(referral_links.disabled_at, now()) end
      where referral_links.program_id = excluded.program_id
     returning id`,
    [link.programId, link.partnerId, link.code, link.active],
  );
  if (result.rows.length === 0) {
    throw new Error(`demo seed: referral code "${link.code}" already belongs to another program`);
  }
}

/** Returns the clear key: the stored one while its hash is live for this program, else a new one. */
async function ensureKey(
  endpoint: Query,
  programId: number,
  isTest: boolean,
  storedKey: string | undefined,
): Promise<string> {
  if (storedKey) {
    // Its last four too (the masked form `sk_live_AbCd...wxyz`): seeds before kept only the prefix.
    const live = await endpoint.query(
      `update program_api_keys set key_last4 = $4
        where program_id = $1 and key_hash = $2 and is_test = $3::boolean and revoked_at is null
          and (rotate_by is null or rotate_by > now())
        returning 1`,
      [programId, await sha256Hex(storedKey), isTest, storedKey.slice(-4)],
    );
    if (live.rows.length > 0) return storedKey;
  }
  const issued = await issueApiKey(isTest);
  await endpoint.query(
    `insert into program_api_keys (program_id, key_hash, key_prefix, key_last4, is_test)
     values ($1, $2, $3, $4, $5::boolean)`,
    [programId, issued.keyHash, issued.keyPrefix, issued.keyLast4, isTest],
  );
  // Nobody holds the clear text of the demo program's other keys of this kind any more: retire them.
  await endpoint.query(
    `update program_api_keys set revoked_at = now()
      where program_id = $1 and is_test = $2::boolean and revoked_at is null and key_hash <> $3`,
    [programId, isTest, issued.keyHash],
  );
  return issued.key;
}

async function readStoredKeys(dataDir: string): Promise<StoredKeys> {
  try {
    const parsed = JSON.parse(await readFile(join(dataDir, KEYS_FILE), "utf8")) as Partial<StoredKeys>;
    return { programs: parsed.programs ?? {} };
  } catch {
    return { programs: {} };
  }
}

async function writeStoredKeys(dataDir: string, keys: StoredKeys): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, KEYS_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, file);
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`demo seed: ${what} returned no row`);
  return value;
}
