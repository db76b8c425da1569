/**
 * `preparedSql` renders a statement once and then only places the values: what drizzle sends must be
 * exactly what the same statement written with the values in place gives (text and parameters), for the
 * statements the tracking routes prepare and for nested prepared statements.
 */
import { type Placeholder, SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { PgDialect } from "drizzle-orm/pg-core/dialect";
import { describe, expect, it } from "vitest";
import { apiKeyRecordQuery } from "../../lib/auth/program-key.ts";
import { preparedSql } from "../../lib/db/prepared-sql.ts";
import { leadEventInserts } from "../../lib/tracking/lead/lead-store.ts";
import { customers } from "../../schema/customers.ts";
import { clickEvents } from "../../schema/events.ts";
import { programApiKeys } from "../../schema/programs.ts";

const dialect = new PgDialect();
const rendered = (statement: SQL) => dialect.sqlToQuery(statement);

type Value = string | number | boolean | null;

/** A statement with aliases, a nested subquery and a parameter used twice, written for either kind of value. */
function clickStatement(q: { clickId: Value | Placeholder; programId: Value | Placeholder }): SQL {
  const o = alias(clickEvents, "o");
  const c = customers;
  return sql`
    select coalesce(${o.clickId}, ${clickEvents.clickId}) as click_id,
           (select ${c.id} from ${c} where ${c.clickId} = ${q.clickId}::text and ${c.programId} = ${q.programId}::int)
    from ${clickEvents} left join ${clickEvents} ${o} on ${o.clickId} = ${clickEvents.visitorClickId}
    where ${clickEvents.clickId} = ${q.clickId}::text and 'literal $ sign' <> ''`;
}

describe("preparedSql", () => {
  const prepared = preparedSql(["clickId", "programId"], (p) => clickStatement(p));

  it("sends the text and parameters the statement gives with its values in place", () => {
    for (const values of [
      { clickId: "clk_1", programId: 7 },
      { clickId: null, programId: null },
      { clickId: "it's $1", programId: 0 },
    ]) {
      const expected = rendered(clickStatement(values));
      const statement = prepared(values);
      const actual = rendered(statement);
      expect(actual.sql).toBe(expected.sql);
      expect(actual.params).toEqual(expected.params);
      expect(actual.params).toEqual([values.clickId, values.programId, values.clickId]);
      // What its kept query answers is what drizzle's walk of its pieces gives, typings included.
      expect(actual).toEqual(expected);
      expect(actual).toEqual(rendered(new SQL(statement.queryChunks)));
    }
  });

  it("is walked again once made to inline its values or appended to", () => {
    const values = { clickId: "clk_1", programId: 7 };
    const inlined = rendered(prepared(values).inlineParams());
    expect(inlined).toEqual(rendered(clickStatement(values).inlineParams()));
    expect(inlined.params).toEqual([]);
    const appended = rendered(prepared(values).append(sql` limit ${1}`));
    expect(appended).toEqual(rendered(clickStatement(values).append(sql` limit ${1}`)));
    expect(appended.params).toEqual(["clk_1", 7, "clk_1", 1]);
  });

  it("nests: a prepared statement built into another one takes its placeholders", () => {
    const outer = preparedSql(
      ["keyHash"],
      (p) => sql`with api_key as (${apiKeyRecordQuery(p.keyHash)}) select 1`,
    );
    const k = programApiKeys;
    const direct = sql`with api_key as (${sql`
    select ${k.programId} as program_id, ${k.isTest} as is_test, ${k.rotationMarkedAt} as rotation_marked_at,
           ${k.rotateBy} as rotate_by
    from ${k}
    where ${k.keyHash} = ${"hash"}::text and ${k.revokedAt} is null`}) select 1`;
    expect(rendered(outer({ keyHash: "hash" }))).toEqual(rendered(direct));
    expect(rendered(apiKeyRecordQuery("hash")).params).toEqual(["hash"]);
  });

  it("sends the lead event and its webhook as one call, the webhook reading the row the insert returns", () => {
    const call = leadEventInserts.none.callText();
    expect(call).toBe(
      `select * from record_lead_event(${Array.from({ length: 14 }, (_, i) => `$${i + 1}`).join(", ")})`,
    );
    const body = leadEventInserts.none.body();
    expect(body).toMatch(/^with l as \(\s*insert into "affiliate_lead_events"/);
    // The webhook is enqueued only when an endpoint of the program takes `lead.created` (migration 0049).
    expect(body).toMatch(
      /returning \*\)\s*select "l"\."id" as id, case when exists \(select 1 from "webhook_endpoints" "subscribed_endpoint"\s+where "subscribed_endpoint"\."program_id" = "l"\."program_id" and "subscribed_endpoint"\."enabled" and 'lead\.created' = any\("subscribed_endpoint"\."events"\)\)\s*then webhook_enqueue\("l"\."program_id", 'lead\.created'/,
    );
    expect(body).not.toContain("currval");
  });

  it("refuses a statement whose parameter is a value rather than a placeholder", () => {
    const withValue = preparedSql(["clickId"], (p) => sql`select ${p.clickId}::text, ${"fixed"}::text`);
    expect(() => withValue({ clickId: "x" })).toThrow(/no value for undefined/);
  });

  it("refuses a missing value, which drizzle would render as nothing", () => {
    expect(() => prepared({ clickId: "x", programId: undefined as unknown as null })).toThrow(
      /no value for programId/,
    );
  });
});
