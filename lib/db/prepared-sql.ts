import {
  type BuildQueryConfig,
  type Placeholder,
  type QueryWithTypings,
  SQL,
  type SQLChunk,
  StringChunk,
  sql,
} from "drizzle-orm";
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
 *
 * Sent on its own (`db.execute`, an item of `db.batch`), the statement is not even walked: its `toQuery`
 * answers the kept text and the values in order, what drizzle's walk of the same pieces gives (walking
 * them was still about 60 µs of worker CPU per click, `npm run bench:profile -- click`). Nested in another
 * statement, drizzle walks its pieces as those of any `sql` template.
 */
export function preparedSql<const Names extends readonly string[]>(
  names: Names,
  build: (params: { [Name in Names[number]]: Placeholder<Name> }) => SQL,
): (values: { [Name in Names[number]]: PreparedValue }) => SQL {
  let rendered: Rendered<Names> | undefined;
  return (values) => {
    rendered ??= render(names, build);
    const { text, pieces, order } = rendered;
    const chunks: SQLChunk[] = [pieces[0] as StringChunk];
    const params: PreparedValue[] = [];
    for (let i = 0; i < order.length; i++) {
      const value = values[order[i] as Names[number]];
      // `undefined` would render as nothing in a drizzle template, not as a parameter.
      if (value === undefined) throw new Error(`no value for ${order[i]}`);
      chunks.push(value as SQLChunk, pieces[i + 1] as StringChunk);
      params.push(value);
    }
    return new RenderedSQL(chunks, { sql: text, params, typings: params.map(() => "none") });
  };
}

/**
 * A prepared statement's SQL: its pieces for nesting, and the query drizzle's walk of them would give. Made
 * to inline its parameters (`.inlineParams()`) or grown (`.append()`), it is walked as any `sql` template,
 * so the kept query is never sent for a statement it no longer is.
 */
class RenderedSQL extends SQL {
  /** Set once the statement is no longer the kept one: drizzle walks it then. */
  private changed = false;

  constructor(
    chunks: SQLChunk[],
    private readonly query: QueryWithTypings,
  ) {
    super(chunks);
  }

  override append(query: SQL): this {
    this.changed = true;
    return super.append(query);
  }

  override inlineParams(): this {
    this.changed = true;
    return super.inlineParams();
  }

  override toQuery(config: BuildQueryConfig): QueryWithTypings {
    return this.changed || config.inlineParams ? super.toQuery(config) : this.query;
  }
}

export interface Rendered<Names extends readonly string[]> {
  /** The whole text, parameters as `$1`, `$2`, ... in order. */
  text: string;
  /** The text cut at its parameters: one more piece than parameters. */
  pieces: StringChunk[];
  /** The placeholder each parameter is, in order. */
  order: Names[number][];
}

const dialect = new PgDialect();

/** `build`'s text, cut at its parameters (`$1`, `$2`, ... in order), and the placeholder each one is. */
export function render<Names extends readonly string[]>(
  names: Names,
  build: (params: { [Name in Names[number]]: Placeholder<Name> }) => SQL,
): Rendered<Names> {
  const placeholders = Object.fromEntries(names.map((name) => [name, sql.placeholder(name)])) as {
    [Name in Names[number]]: Placeholder<Name>;
  };
  const query = dialect.sqlToQuery(build(placeholders));
  // A value written into `build` (not a placeholder) has no name: each call then refuses it as missing.
  const order = query.params.map((param) => (param as Placeholder<Names[number]>).name);
  // Cut at `$1`, `$2`, ...: one more piece than parameters, or a `$n` sits inside a literal.
  const pieces = query.sql.split(/\$\d+/).map((text) => new StringChunk(text));
  if (pieces.length !== order.length + 1) throw new Error("`$` in text");
  return { text: query.sql, pieces, order };
}
