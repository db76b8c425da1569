/**
 * Migration 0056 binds the provider customer ids customers already held (`customers.provider_customer_id`)
 * in `customer_provider_ids`, so that a database migrated with customers in it finds each of them by its id as
 * before: run on a database migrated to 0055 that holds such customers, as a deploy runs it.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BINDING_MIGRATION = "0056_customer_provider_ids";

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

describe(`migration ${BINDING_MIGRATION}`, () => {
  let db: PGlite;
  let before: string;
  beforeAll(async () => {
    db = new PGlite();
    before = await migrationsBefore(BINDING_MIGRATION);
    await migrate(drizzle({ client: db }), { migrationsFolder: before });
    await db.exec(`
      insert into advertisers (name) values ('Migration');
      insert into programs (advertiser_id, name, domain, commission_rate)
        values (1, 'one', 'one.test', 0.1), (1, 'two', 'two.test', 0.1);
      insert into customers (program_id, click_id, status, provider_customer_id) values
        (1, 'clk_a', 'converted', 'cus_a'),
        (1, 'clk_b', 'converted', null),
        (1, 'clk_c', 'converted', 'cus_shared'),
        (1, 'clk_d', 'converted', 'cus_shared'),
        (2, 'clk_e', 'converted', 'cus_a');`);
    await migrate(drizzle({ client: db }), { migrationsFolder: "migrations" });
  }, 120_000);
  afterAll(async () => {
    await db.close();
    await rm(before, { recursive: true, force: true });
  });

  it("binds each saved id to its customer, per program, and a shared one to the earliest customer", async () => {
    const { rows } = await db.query<{ program_id: number; provider_customer_id: string; click_id: string }>(`
      select i.program_id, i.provider_customer_id, c.click_id
      from customer_provider_ids i join customers c on c.id = i.customer_id
      order by i.program_id, i.provider_customer_id`);
    expect(rows).toEqual([
      { program_id: 1, provider_customer_id: "cus_a", click_id: "clk_a" },
      { program_id: 1, provider_customer_id: "cus_shared", click_id: "clk_c" },
      { program_id: 2, provider_customer_id: "cus_a", click_id: "clk_e" },
    ]);
  });
});
