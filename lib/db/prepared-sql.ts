import { type Placeholder, SQL, type SQLChunk, StringChunk, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core/dialect";

/** A parameter value of a prepared statement: what the driver sends as text, or a placeholder when nested. */
export type PreparedValue = string | number | boolean | null | Placeholder;

/**
 * A statement whose shape never changes, only its parameter values, rendered once per isolate.
 *
 * Why: drizzle renders a `sql` template on every execution, walking every column and table reference with
 * its `is()` class checks; on the tracking routes' reads that walk costs more CPU than everything else the
 * route does itself (`npm run bench:profile`). Here `build` runs once, with a placeholder for each named
 * parameter, and its text is kept cut at the parameters: each call only interleaves the kept text pieces
 * with the values, which drizzle then passes through as it would any parameter. The text and the parameter
 * list sent are exactly those `build` would give with the values in place of the placeholders.
 *
 * A value is a single parameter (never a list or an SQL fragment: those change the text). A placeholder is
 * passed through, so a prepared statement can be nested in another one's `build`.
 */
export function preparedSql<const Names extends readonly string[]>(
  names: Names,
  build: (params: { [Name in Names[number]]: Placeholder<Name> }) => SQL,
): (values: { [Name in Names[number]]: PreparedValue }) => SQL {
  let rendered: { pieces: StringChunk[]; order: Names[number][] } | undefined;
  return (values) => {
    rendered ??= render(names, build);
    const { pieces, order } = rendered;
    const chunks: SQLChunk[] = [pieces[0] as StringChunk];
    for (let i = 0; i < order.length; i++) {
      const value = values[order[i] as Names[number]];
      // `undefined` would render as nothing in a drizzle template, not as a parameter.
      if (value === undefined) throw new Error(`no value for ${order[i]}`);
      chunks.push(value as SQLChunk, pieces[i + 1] as StringChunk);
    }
    return new SQL(chunks);
  };
}

const dialect = new PgDialect();

/** `build`'s text cut at its parameters (`$1`, `$2`, ... in order), and the placeholder each one is. */
function render<Names extends readonly string[]>(
  names: Names,
  build: (params: { [Name in Names[number]]: Placeholder<Name> }) => SQL,
): { pieces: StringChunk[]; order: Names[number][] } {
  const placeholders = Object.fromEntries(names.map((name) => [name, sql.placeholder(name)])) as {
    [Name in Names[number]]: Placeholder<Name>;
  };
  const query = dialect.sqlToQuery(build(placeholders));
  // A value written into `build` (not a placeholder) has no name: each call then refuses it as missing.
  const order = query.params.map((param) => (param as Placeholder<Names[number]>).name);
  // Cut at `$1`, `$2`, ...: one more piece than parameters, or a `$n` sits inside a literal.
  const pieces = query.sql.split(/\$\d+/).map((text) => new StringChunk(text));
  if (pieces.length !== order.length + 1) throw new Error("`$` in text");
  return { pieces, order };
}
