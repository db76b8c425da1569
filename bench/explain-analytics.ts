/**
 * `npm run plans:analytics`: the plans, with timings and buffers (`EXPLAIN (ANALYZE, BUFFERS)`), of the
 * statements readiness and analytics by source send, on a database made by `npm run bench:generate`
 * (`DATABASE_URL`, default the local `affiliate_bench10m`). The statements are the service's own, captured
 * from its store functions, so what is explained is what the bench times. Read-only: every statement runs
 * in a transaction rolled back.
 */
import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import pg from "pg";
import { parseAnalyticsQuery } from "../lib/analytics/analytics-request.ts";
import { readAnalytics } from "../lib/analytics/read-analytics.ts";
import type { RollupReach } from "../lib/analytics/tiling.ts";
import type { Database } from "../lib/db/client.ts";
import { readReadinessFacts } from "../lib/readiness/readiness-store.ts";
import { requirePostgresUrl } from "./analytics-db.ts";

const url = requirePostgresUrl(
  "DATABASE_URL",
  process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/affiliate_bench10m",
);
const dialect = new PgDialect();

/** A stand-in for the database client that records each statement instead of sending it. */
function recorder(): { db: Database; statements: SQL[] } {
  const statements: SQL[] = [];
  const empty = { rows: [] };
  const db = {
    execute: (statement: SQL) => {
      statements.push(statement);
      return Promise.resolve(empty);
    },
    batch: (queries: Promise<unknown>[]) => Promise.all(queries),
  } as unknown as Database;
  return { db, statements };
}

const scenarios: Array<{ name: string; query?: Record<string, string> }> = [
  { name: "readiness" },
  { name: "analytics 7 days, partner", query: { group_by: "partner", interval: "last_7_days" } },
  { name: "analytics 30 days, utm_source", query: { group_by: "utm_source", interval: "last_30_days" } },
  {
    name: "analytics 30 days, link, Asia/Kolkata",
    query: { group_by: "link", interval: "last_30_days", timezone: "Asia/Kolkata" },
  },
  {
    name: "analytics 365 days, referrer_domain",
    query: { group_by: "referrer_domain", interval: "last_365_days" },
  },
  {
    name: "analytics 365 days, landing_page, America/New_York",
    query: { group_by: "landing_page", interval: "last_365_days", timezone: "America/New_York" },
  },
];
const only = process.argv.slice(2);

const client = new pg.Client({ connectionString: url });
await client.connect();
try {
  const program = await client.query(
    "select program_id from referral_links where short_link like 'bench%' order by id limit 1",
  );
  const programId = Number(program.rows[0]?.program_id);
  if (!programId) throw new Error(`${url} holds no bench data: run npm run bench:generate first`);
  const progress = await client.query(
    "select hours_until, days_until, months_until, half_hours_from, partials_until, tail_from, tail_until from analytics_rollup_progress where program_id = $1",
    [programId],
  );
  const p = progress.rows[0] as Record<string, Date> | undefined;
  const reach: RollupReach = {
    hoursUntil: p?.hours_until ?? null,
    daysUntil: p?.days_until ?? null,
    monthsUntil: p?.months_until ?? null,
    halfHoursFrom: p?.half_hours_from ?? null,
    partialsUntil: p?.partials_until ?? null,
    tailFrom: p?.tail_from ?? null,
    tailUntil: p?.tail_until ?? null,
  };
  for (const s of scenarios) {
    if (only.length > 0 && !only.some((o) => s.name.includes(o))) continue;
    const { db, statements } = recorder();
    if (s.query) {
      const parsed = parseAnalyticsQuery(s.query, new Date());
      if (!parsed.ok) throw new Error(`bad query ${JSON.stringify(s.query)}`);
      await readAnalytics(db, programId, parsed.query, reach).catch(() => undefined);
    } else {
      await readReadinessFacts(db, { programId }, new Date()).catch(() => undefined);
    }
    console.log(`\n=== ${s.name}`);
    await client.query("begin");
    try {
      for (const statement of statements) {
        const q = dialect.sqlToQuery(statement);
        if (/^\s*select set_config/.test(q.sql)) {
          await client.query(q.sql, q.params);
          continue;
        }
        const plan = await client.query(`explain (analyze, buffers) ${q.sql}`, q.params);
        for (const row of plan.rows) console.log(row["QUERY PLAN"]);
      }
    } finally {
      await client.query("rollback");
    }
  }
} finally {
  await client.end();
}
