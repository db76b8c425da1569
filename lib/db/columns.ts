import { type AnyColumn, type SQL, sql } from "drizzle-orm";

/**
 * A column's bare name from the schema, for the places SQL wants it unqualified: an insert's column list, an
 * `on conflict` target, an output alias. Renaming the column in `schema/` renames it here.
 */
export function columnName(column: AnyColumn): SQL {
  return sql`${sql.identifier(column.name)}`;
}

/**
 * A value of `column` as the driver returned it in a raw statement's row (text or number), read the way the
 * query builder reads that column (`mapFromDriverValue`): an int as a number, a timestamp as a Date.
 */
export function fromDriver<C extends AnyColumn>(column: C, value: unknown): C["_"]["data"] {
  return column.mapFromDriverValue(value) as C["_"]["data"];
}

/** `fromDriver` for a column that may be null (SQL null, or a key absent from a JSON row, reads as null). */
export function fromDriverOrNull<C extends AnyColumn>(column: C, value: unknown): C["_"]["data"] | null {
  return value === null || value === undefined ? null : fromDriver(column, value);
}

/** Bare column names joined by commas: an insert's column list, a multi-column `on conflict` target. */
export function columnList(...columns: AnyColumn[]): SQL {
  return sql.join(columns.map(columnName), sql`, `);
}
