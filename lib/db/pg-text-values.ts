/**
 * Postgres values as text, both ways, for the SQL-over-HTTP client (lib/db/sql-over-http.ts): parameters go
 * as text, and rows come back as text (`Neon-Raw-Text-Output`) to be parsed by column type.
 *
 * The parsing is what `@neondatabase/serverless` (pg-types) did once `drizzle-orm/neon-http` had set its
 * overrides: dates, timestamps, intervals and their arrays stay text (drizzle's columns map them), int8 and
 * numeric stay text (no precision lost), int2/int4/oid and floats become numbers, bool a boolean, json and
 * jsonb are parsed, and arrays of those become arrays. The few types pg-types turned into Buffers or
 * objects (bytea, point, circle) are refused loudly rather than handed over as different values.
 */

type Parser = (text: string) => unknown;

const asText: Parser = (text) => text;
const asInteger: Parser = (text) => Number.parseInt(text, 10);
const asFloat: Parser = (text) => Number.parseFloat(text);
const asBoolean: Parser = (text) =>
  text === "TRUE" ||
  text === "t" ||
  text === "true" ||
  text === "y" ||
  text === "yes" ||
  text === "on" ||
  text === "1";
const asJson: Parser = (text) => JSON.parse(text);

const arrayOf =
  (element: Parser): Parser =>
  (text) =>
    parsePgArray(text, element);

/** By type OID (pg_type.oid); any type not listed is handed over as its text. */
const parsers = new Map<number, Parser>([
  [20, asText], // int8
  [21, asInteger], // int2
  [23, asInteger], // int4
  [26, asInteger], // oid
  [700, asFloat], // float4
  [701, asFloat], // float8
  [16, asBoolean],
  [114, asJson],
  [3802, asJson], // jsonb
  [1000, arrayOf(asBoolean)],
  [1005, arrayOf(asInteger)], // int2[]
  [1007, arrayOf(asInteger)], // int4[]
  [1028, arrayOf(asInteger)], // oid[]
  [1016, arrayOf((text) => text.trim())], // int8[]
  [1021, arrayOf(asFloat)], // float4[]
  [1022, arrayOf(asFloat)], // float8[]
  [199, arrayOf(asJson)], // json[]
  [3807, arrayOf(asJson)], // jsonb[]
  ...[651, 791, 1008, 1009, 1014, 1015, 1040, 1041, 1183, 1270, 2951, 3907].map(
    (oid) => [oid, arrayOf(asText)] as [number, Parser],
  ), // text-like arrays (text[], varchar[], uuid[], inet[], ...)
]);

const refused = new Map<number, string>([
  [17, "bytea"],
  [600, "point"],
  [718, "circle"],
  [1001, "bytea[]"],
  [1017, "point[]"],
]);

export function parserFor(oid: number): Parser {
  const parser = parsers.get(oid);
  if (parser) return parser;
  const name = refused.get(oid);
  if (name) {
    return () => {
      throw new Error(`the SQL-over-HTTP client does not read ${name} values`);
    };
  }
  return asText;
}

/**
 * A Postgres array literal (`{a,"b c",NULL,{1,2}}`, optionally prefixed by its bounds `[0:1]=`): quoted
 * elements keep their text (even "NULL"), an unquoted NULL is null, nested braces are nested arrays.
 */
export function parsePgArray(text: string, element: Parser): unknown[] {
  let position = text[0] === "[" ? text.indexOf("=") + 1 : 0;
  function parseLevel(): unknown[] {
    const entries: unknown[] = [];
    position++; // the opening brace
    let current = "";
    let quoted = false;
    let wasQuoted = false;
    const finishEntry = () => {
      if (current === "" && !wasQuoted) return;
      entries.push(!wasQuoted && current === "NULL" ? null : element(current));
      current = "";
      wasQuoted = false;
    };
    while (position < text.length) {
      const char = text[position++];
      if (quoted) {
        if (char === "\\") current += text[position++];
        else if (char === '"') quoted = false;
        else current += char;
      } else if (char === '"') {
        quoted = true;
        wasQuoted = true;
      } else if (char === "{") {
        position--;
        entries.push(parseLevel());
      } else if (char === ",") {
        finishEntry();
      } else if (char === "}") {
        finishEntry();
        return entries;
      } else {
        current += char;
      }
    }
    throw new Error("unbalanced Postgres array literal");
  }
  return parseLevel();
}

/** A parameter as the text Postgres reads, as `pg`'s `prepareValue` writes it (null stays null). */
export function parameterText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return dateText(value);
  if (value instanceof Uint8Array) return `\\x${hex(value)}`;
  if (Array.isArray(value)) return arrayLiteral(value);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function arrayLiteral(values: unknown[]): string {
  const elements = values.map((value) => {
    if (value === null || value === undefined) return "NULL";
    if (Array.isArray(value)) return arrayLiteral(value);
    if (value instanceof Uint8Array) return `"\\\\x${hex(value)}"`;
    const text = parameterText(value) ?? "";
    return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  });
  return `{${elements.join(",")}}`;
}

/** `pg` writes a Date in local time with its offset; a worker's local time is UTC. */
function dateText(date: Date): string {
  return date.toISOString().replace("Z", "+00:00");
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
