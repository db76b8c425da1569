/**
 * Migrations that carry data forward, each run on a database migrated up to just before it and holding rows
 * of the shape it converts, as a deploy runs it on production.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { afterAll, describe, expect, it } from "vitest";

/** A copy of the migrations folder whose journal ends before `tag`. */
async function migrationsBefore(tag: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "migrations-"));
  await cp("migrations", folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(await readFile(journalPath, "utf8")) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((e) => e.tag === tag);
  if (at < 0) throw new Error(`no migration ${tag}`);
  journal.entries = journal.entries.slice(0, at);
  await writeFile(journalPath, JSON.stringify(journal));
  return folder;
}

/** A database migrated up to before `tag`, given `rows` (SQL), then migrated to the end. */
async function migratedAcross(tag: string, rows: string): Promise<PGlite> {
  const db = new PGlite();
  const before = await migrationsBefore(tag);
  try {
    await migrate(drizzle({ client: db }), { migrationsFolder: before });
    await db.exec(rows);
    await migrate(drizzle({ client: db }), { migrationsFolder: "migrations" });
    return db;
  } finally {
    await rm(before, { recursive: true, force: true });
  }
}

const twoPrograms = `
  insert into advertisers (name) values ('Migration');
  insert into programs (advertiser_id, name, domain, commission_rate)
    values (1, 'one', 'one.test', 0.1), (1, 'two', 'two.test', 0.1);`;

describe("migration 0056: customer_provider_ids", () => {
  let db: PGlite | undefined;
  afterAll(() => db?.close());

  it("binds each saved id to its customer, per program, and a shared one to the earliest customer", async () => {
    db = await migratedAcross(
      "0056_customer_provider_ids",
      `${twoPrograms}
      insert into customers (program_id, click_id, status, provider_customer_id) values
        (1, 'clk_a', 'converted', 'cus_a'),
        (1, 'clk_b', 'converted', null),
        (1, 'clk_c', 'converted', 'cus_shared'),
        (1, 'clk_d', 'converted', 'cus_shared'),
        (2, 'clk_e', 'converted', 'cus_a');`,
    );
    const { rows } = await db.query(`
      select i.program_id, i.provider_customer_id, c.click_id
      from customer_provider_ids i join customers c on c.id = i.customer_id
      order by i.program_id, i.provider_customer_id`);
    expect(rows).toEqual([
      { program_id: 1, provider_customer_id: "cus_a", click_id: "clk_a" },
      { program_id: 1, provider_customer_id: "cus_shared", click_id: "clk_c" },
      { program_id: 2, provider_customer_id: "cus_a", click_id: "clk_e" },
    ]);
  }, 120_000);
});

describe("migration 0057: the test chain's links take test clicks only", () => {
  let db: PGlite | undefined;
  afterAll(() => db?.close());

  it("marks the chain's own links, and no link a brand made", async () => {
    db = await migratedAcross(
      "0057_test_only_fixture_links",
      `${twoPrograms}
      insert into partners (name, email) values
        ('Synthetic verification partner', 'synthetic-verification+p1@fixtures.invalid'),
        ('Synthetic verification partner', 'synthetic-verification+p2@fixtures.invalid'),
        ('A real partner', 'someone@example.com');
      insert into referral_links (program_id, partner_id, short_link) values
        (1, 1, 'synthetic-verify-p1'),
        (2, 2, 'synthetic-verify-p2'),
        (1, 3, 'real-code'),
        -- A brand's own link under a code like the chain's, of a real partner: not a fixture.
        (2, 3, 'synthetic-verify-p3');`,
    );
    const { rows } = await db.query("select short_link, test_only from referral_links order by short_link");
    expect(rows).toEqual([
      { short_link: "real-code", test_only: false },
      { short_link: "synthetic-verify-p1", test_only: true },
      { short_link: "synthetic-verify-p2", test_only: true },
      { short_link: "synthetic-verify-p3", test_only: false },
    ]);
  }, 120_000);
});

describe("migration 0059: kept reversals keep their mode", () => {
  let db: PGlite | undefined;
  afterAll(() => db?.close());

  it("puts the open reversals a test-mode event kept in the program's test namespace, and no other", async () => {
    db = await migratedAcross(
      "0059_pending_reversal_namespace",
      `${twoPrograms}
      insert into stripe_events (event_id, type, program_id, livemode, status, claimed_at) values
        ('evt_test', 'charge.refunded', 1, false, 'completed', now()),
        ('evt_live', 'charge.refunded', 1, true, 'completed', now()),
        ('evt_test_applied', 'charge.refunded', 2, false, 'completed', now());
      insert into stripe_pending_reversals
        (program_id, payment_id, event_id, kind, reversal_id, charge_amount_cents, refunded_total_cents, applied_at)
      values
        (1, 'pi_1', 'evt_test', 'refund', 're_1', 100, 100, null),
        (1, 'pi_2', 'evt_live', 'refund', 're_2', 100, 100, null),
        (2, 'pi_3', 'evt_test_applied', 'refund', 're_3', 100, 100, now());`,
    );
    const { rows } = await db.query(
      "select event_id, namespace, listed_refunds from stripe_pending_reversals order by event_id",
    );
    expect(rows).toEqual([
      { event_id: "evt_live", namespace: "live", listed_refunds: [] },
      { event_id: "evt_test", namespace: "test:1", listed_refunds: [] },
      { event_id: "evt_test_applied", namespace: "live", listed_refunds: [] },
    ]);
  }, 120_000);
});
