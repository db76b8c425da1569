import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Issue 9, section 1: persistence names columns from the schema, so renaming a column fails to compile. A row
 * read back from a raw statement is mapped with `fromDriver`/`fromDriverOrNull` (`lib/db/columns.ts`), which
 * take the schema's column; a hand conversion of a row's field (`Number(row.id)`, `new Date(row.created_at)`)
 * names the column only in a string and keeps compiling after a rename. This check finds those conversions.
 */
const conversion = String.raw`\b(?:Number|String|Boolean|BigInt|parseInt|parseFloat|Number\.parseInt|Number\.parseFloat|new Date)\(\s*`;
/**
 * A row named `row`/`r` (or `result.rows[0]`), or any object's snake_case field (a column's name in SQL);
 * a request `body`'s fields are the API's names, not columns.
 */
const handMapping = new RegExp(
  `${conversion}(?:(?:\\w+\\.)?(?:row|rows|r)\\b\\s*(?:\\?\\.|\\.|\\[)|(?!body\\b)[A-Za-z_]\\w*(?:\\??\\.\\w+)*\\??\\.[a-z]+_[a-z0-9_]+)`,
);

/**
 * Each exception and why. A file is listed with the count of hand conversions it may hold, so a new one in the
 * same file is still reported.
 */
const allowed: Record<string, { count: number; why: string }> = {
  [join("lib", "analytics", "analytics-store.ts")]: {
    count: 4,
    why: "the rollup tables' measures are chosen at run time from a list (and the row's names are the rollup SQL's own aliases); no single schema column names them",
  },
  [join("lib", "dashboard", "recent-events.ts")]: {
    count: 1,
    why: "`at_text` is the feed's own to_char text of created_at, kept to the microsecond for the cursor; it is no column's value",
  },
  [join("lib", "dashboard", "performance.ts")]: {
    count: 3,
    why: "the series' measures are aggregates picked at run time by name (sum/count aliases of the series SQL), not table columns",
  },
  [join("lib", "fraud", "scan-lead-signals.ts")]: {
    count: 1,
    why: "the number of leads the scan function `fraud_scan_leads` (migration 0020) returns, not a column",
  },
  [join("lib", "fraud", "scan-sale-signals.ts")]: {
    count: 1,
    why: "the number of sales the scan function `fraud_scan_sales` (migration 0020) returns, not a column",
  },
  [join("lib", "fraud", "copy-flags-to-late-commissions.ts")]: {
    count: 1,
    why: "the number of commissions the statement updated (a count of its CTE), not a column",
  },
};

async function libFiles(): Promise<string[]> {
  const entries = await readdir("lib", { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => join(e.parentPath, e.name));
}

async function handMappedRows(): Promise<string[]> {
  const found: string[] = [];
  for (const file of await libFiles()) {
    const hits = (await readFile(file, "utf8"))
      .split("\n")
      .map((line, index) => ({ line: line.trim(), number: index + 1 }))
      .filter(({ line }) => handMapping.test(line));
    const exception = allowed[file];
    if (exception && hits.length <= exception.count) continue;
    for (const hit of hits) found.push(`${file}:${hit.number}: ${hit.line}`);
  }
  return found;
}

describe("persistence names its columns through the schema", () => {
  it("no file in lib/ converts a raw row's field by hand outside the explained exceptions", async () => {
    expect(await handMappedRows()).toEqual([]);
  });

  it("every exception is still needed (a file that no longer converts by hand leaves the list)", async () => {
    const stale: string[] = [];
    for (const [file, { count }] of Object.entries(allowed)) {
      const text = await readFile(file, "utf8").catch(() => "");
      const hits = text.split("\n").filter((line) => handMapping.test(line.trim())).length;
      if (hits !== count) stale.push(`${file}: ${hits} hand conversions, the list says ${count}`);
    }
    expect(stale).toEqual([]);
  });

  it("the check finds what it looks for (each shape of hand mapping is reported, schema mapping is not)", () => {
    for (const line of [
      "userId: Number(row.user_id),",
      "id: Number(r.id),",
      "return Number(result.rows[0]?.user_id);",
      "createdAt: new Date(row.event_created_at),",
      "name: String(row.name),",
      "const n = (m: string) => Number(row[m] ?? 0);",
      "blocked: String(row?.blocked) === 't',",
      "programId: Number(k.program_id),",
      "active: Number(f.live_keys.active),",
    ]) {
      expect(handMapping.test(line), line).toBe(true);
    }
    for (const line of [
      "userId: fromDriver(users.id, row.user_id),",
      'headers.set("X-RateLimit-Limit", String(result.limit));',
      "const total = Number(body.amount);",
      "occurredAt: body.occurred_at ? new Date(body.occurred_at) : null,",
    ]) {
      expect(handMapping.test(line), line).toBe(false);
    }
  });
});
