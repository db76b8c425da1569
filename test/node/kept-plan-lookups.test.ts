/**
 * A kept-plan statement (`lib/db/kept-plan.ts`) runs the generic plan PostgreSQL made for it once per
 * connection, from the statistics of that moment. Whatever those were, every index it reads must be read as a
 * lookup: an equality on each of the index's columns. Not a walk of all rows of a program through an index
 * that starts with the program (the plan a freshly migrated database gave a lead's visitor click, a refund's
 * sale and every customer found by its click), nor of every unlinked payment id (`sale_id is null`, the
 * plan a sale's link got once the statistics said few ids were unlinked: each sale then read every id
 * unlinked since the last vacuum). Checked on a freshly migrated database (no statistics) and on one whose
 * statistics look like production's (every payment id linked, customers without an email or provider id).
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INDEX_LOOKUPS_ONLY, type KeptPlanStatement } from "../../lib/db/kept-plan.ts";
import { keptPlanStatements } from "../../lib/kept-plan-statements.ts";

/**
 * Index reads that constrain only a leading part of their index, by design: a parent's few children.
 * `statement index` -> why.
 */
const PREFIX_READS: Record<string, string> = {
  "read_refund_and_repeats refunds_sale_idempotency_unique":
    "a refund without a refund_id: the sale's refunds of its amount, by the sale",
};

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Index Cond"?: string;
  Plans?: PlanNode[];
}

/** The statements that run with index lookups only (readiness reads its program whole, by design). */
const lookupStatements = keptPlanStatements.filter((s) => s.settings.includes(INDEX_LOOKUPS_ONLY));

async function indexColumns(db: PGlite, indexName: string): Promise<string[]> {
  const { rows } = await db.query<{ column: string }>(
    `select a.attname as column
     from pg_index i join pg_class c on c.oid = i.indexrelid
     join lateral unnest(i.indkey) with ordinality k(attnum, n) on true
     join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
     where c.relname = $1 order by k.n`,
    [indexName],
  );
  return rows.map((r) => r.column);
}

/** Each index read of the statement's generic plan that is not an equality on every column of its index. */
async function walks(db: PGlite, statement: KeptPlanStatement<readonly string[]>): Promise<string[]> {
  const name = `lookups_${statement.functionName}`;
  await db.query(`prepare ${name} (${statement.parameterTypes.join(", ")}) as ${statement.body()}`);
  try {
    const nulls = statement.parameterTypes.map(() => "null").join(", ");
    const { rows } = await db.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
      `explain (format json) execute ${name}(${nulls})`,
    );
    const found: string[] = [];
    const visit = async (node: PlanNode) => {
      const index = node["Index Name"];
      if (index && !PREFIX_READS[`${statement.functionName} ${index}`]) {
        const condition = node["Index Cond"] ?? "";
        const columns = await indexColumns(db, index);
        const unconstrained = columns.filter(
          (column) => !new RegExp(`(^|[(\\s])${column} = `).test(condition),
        );
        if (unconstrained.length > 0) {
          found.push(`${node["Node Type"]} on ${index} (${condition || "no condition"})`);
        }
      }
      for (const child of node.Plans ?? []) await visit(child);
    };
    const plan = rows[0]?.["QUERY PLAN"][0].Plan;
    if (plan) await visit(plan);
    return found;
  } finally {
    await db.query(`deallocate ${name}`);
  }
}

async function migrated(): Promise<PGlite> {
  const db = new PGlite();
  await migrate(drizzle({ client: db }), { migrationsFolder: "migrations" });
  // As each kept-plan function runs (`GENERIC_PLANS`, `INDEX_LOOKUPS_ONLY`).
  await db.exec("set plan_cache_mode = force_generic_plan; set enable_seqscan = off");
  return db;
}

/**
 * Rows as production has them once it has run a while, then analysed: 50 programs, 200 partners and their
 * links and balances; every payment id linked to its sale; customers without an email or provider id; a
 * commission per sale, a few refunds and withdrawals, leads of which some provisional.
 */
async function withProductionStatistics(db: PGlite): Promise<void> {
  await db.exec(`
    set enable_seqscan = on;
    insert into advertisers (name) values ('Statistics');
    insert into programs (advertiser_id, name, domain, commission_rate)
      select 1, 'program ' || p, 'p' || p || '.test', 0.1 from generate_series(1, 50) p;
    insert into partners (name, email)
      select 'Partner ' || i, 'partner' || i || '@example.test' from generate_series(1, 200) i;
    insert into program_partners (program_id, partner_id, status)
      select 1 + i % 50, i, 'active' from generate_series(1, 200) i;
    insert into referral_links (program_id, partner_id, short_link)
      select 1 + i % 50, 1 + i % 200, 'link-' || i from generate_series(1, 400) i;
    insert into partner_balances (program_id, partner_id, currency)
      select 1 + i % 50, i, 'USD' from generate_series(1, 200) i;
    insert into affiliate_click_events (click_id, program_id, partner_id, link_id, affiliate_url)
      select 'click-' || i, 1 + i % 50, 1 + i % 200, 1 + i % 400, 'https://p.test/' from generate_series(1, 4000) i;
    insert into affiliate_lead_events (program_id, partner_id, click_id, customer_key, provisional, settled_at)
      select 1 + i % 50, 1 + i % 200, 'click-' || i, 'key-' || i, i % 4 = 0, case when i % 8 = 0 then now() end
      from generate_series(1, 2000) i;
    insert into customers (program_id, partner_id, click_id, clicked_at, status)
      select 1 + i % 50, 1 + i % 200, 'click-' || i, now(), 'converted' from generate_series(1, 2000) i;
    insert into affiliate_sale_events (processor_event_id, program_id, partner_id, customer_id, amount_cents)
      select 'tx-' || i, 1 + i % 50, 1 + i % 200, i, 100 from generate_series(1, 2000) i;
    insert into payment_aliases (program_id, namespace, alias, payment_id, sale_id)
      select 1 + i % 50, 'live', 'tx-' || i, 'tx-' || i, i from generate_series(1, 2000) i;
    insert into commissions (sale_id, program_id, partner_id, amount_cents, currency, status)
      select i, 1 + i % 50, 1 + i % 200, 10, 'USD', 'approved' from generate_series(1, 2000) i;
    insert into refunds (sale_id, idempotency_key, amount_cents, refunded_total_cents)
      select i, 'refund-' || i, 1, 1 from generate_series(1, 400) i;
    insert into withdrawals (program_id, partner_id, currency, amount_cents)
      select 1 + i % 50, 1 + i % 200, 'USD', 100 from generate_series(1, 400) i;
    analyze;
    set enable_seqscan = off;`);
}

describe("every kept-plan lookup is a lookup whatever the statistics when its plan was made", () => {
  const databases: Array<[string, () => Promise<PGlite>]> = [
    ["freshly migrated (no statistics)", migrated],
    [
      "with production-like statistics",
      async () => {
        const db = await migrated();
        await withProductionStatistics(db);
        return db;
      },
    ],
  ];

  it("checks the request path's statements", () => {
    expect(lookupStatements.map((s) => s.functionName)).toEqual(
      expect.arrayContaining(["read_lead_facts", "read_sale_facts", "link_payment_ids_and_enqueue_webhooks"]),
    );
  });

  for (const [what, open] of databases) {
    describe(what, () => {
      let db: PGlite;
      beforeAll(async () => {
        db = await open();
      }, 60_000);
      afterAll(() => db.close());

      for (const statement of lookupStatements) {
        it(`${statement.functionName}: each index read is an equality on all its columns`, async () => {
          expect(await walks(db, statement)).toEqual([]);
        });
      }
    });
  }
});
