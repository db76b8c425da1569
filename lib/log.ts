import { pgErrorOf } from "./db/errors.ts";

/**
 * The one logger: JSON lines bound to the request or event id they belong to. It logs codes and ids, never
 * SQL parameters, keys, tokens, emails or payloads: an error is reduced by `errorFields` to its class, the
 * Postgres code and constraint, never its message (a driver's message can quote the statement's values).
 */
export type LogLevel = "info" | "warn" | "error";

/** Only scalar fields: ids, codes, counts, outcomes. Never a request body, payload or SQL text. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  /** `error` is reduced by `errorFields`: its message and stack are never written. */
  error(msg: string, error?: unknown, fields?: LogFields): void;
  /** A logger carrying these fields on every line as well (e.g. `{ event_id }`). */
  with(fields: LogFields): Logger;
}

/**
 * What may be said about an error without leaking what it carried: its name, the Postgres SQLSTATE code and
 * constraint name when there is one. Our own errors may opt in to a safe `logCode`.
 */
export function errorFields(error: unknown): LogFields {
  if (error === undefined) return {};
  const pg = pgErrorOf(error);
  const name = error instanceof Error ? error.name : typeof error;
  const logCode = (error as { logCode?: unknown } | null)?.logCode;
  return {
    error_name: name,
    ...(pg?.code ? { pg_code: pg.code } : {}),
    ...(pg?.constraint ? { pg_constraint: pg.constraint } : {}),
    ...(typeof logCode === "string" ? { error_code: logCode } : {}),
  };
}

function write(level: LogLevel, msg: string, fields: LogFields): void {
  const line = JSON.stringify({ level, msg, ...fields });
  if (level === "error") console.error(line);
  else console.log(line);
}

export function createLogger(bound: LogFields = {}): Logger {
  return {
    info: (msg, fields) => write("info", msg, { ...bound, ...fields }),
    warn: (msg, fields) => write("warn", msg, { ...bound, ...fields }),
    error: (msg, error, fields) => write("error", msg, { ...bound, ...errorFields(error), ...fields }),
    with: (fields) => createLogger({ ...bound, ...fields }),
  };
}

/**
 * Fields that are not all scalars (a list of ids) made loggable: a list of scalars is joined with commas,
 * anything else (an object, a payload) is left out.
 */
export function scalarFields(fields: Record<string, unknown>): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === null || ["string", "number", "boolean", "undefined"].includes(typeof value)) {
      out[key] = value as LogFields[string];
    } else if (Array.isArray(value) && value.every((v) => ["string", "number"].includes(typeof v))) {
      out[key] = value.join(",");
    }
  }
  return out;
}

/** For code that runs outside a request or event (scheduled jobs, the queue consumer, start-up). */
export const rootLogger: Logger = createLogger();
