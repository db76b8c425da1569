import type { ApiWarning } from "./api-client.ts";
import { CliError, exitCodes } from "./exit-codes.ts";

export interface GlobalOptions {
  json?: boolean;
  baseUrl: string;
  /** The address from `--base-url`, AFFILIATE_TRACKING_BASE_URL or the default: never the project file's. */
  givenBaseUrl: string;
}

/** `--json`: exactly one JSON document on stdout per command, success or failure; humans get text. */
export function emit(options: GlobalOptions, json: unknown, human: () => void): void {
  if (options.json) process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  else human();
}

/**
 * The service's warnings on an answer (a program key due for rotation), on stderr for humans so stdout stays
 * the command's own; with `--json` they are the document's `warnings` field instead.
 */
export function warn(options: GlobalOptions, warnings: readonly ApiWarning[]): void {
  if (options.json) return;
  for (const w of warnings) {
    const by = w.rotate_by ? ` Rotate by ${w.rotate_by}.` : "";
    process.stderr.write(`Warning: ${w.message}${by}\n`);
    if (w.hint) process.stderr.write(`Hint: ${w.hint}\n`);
    if (w.docs_url) process.stderr.write(`See ${w.docs_url}\n`);
  }
}

export function fail(options: GlobalOptions, error: unknown): never {
  const cliError =
    error instanceof CliError
      ? error
      : new CliError(`Unexpected error: ${(error as Error)?.message ?? String(error)}`, exitCodes.failure);
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          ok: false,
          error: {
            message: cliError.message,
            exit_code: cliError.exitCode,
            ...(cliError.details.status ? { status: cliError.details.status } : {}),
            ...(cliError.details.code ? { code: cliError.details.code } : {}),
            ...(cliError.details.hint ? { hint: cliError.details.hint } : {}),
            ...(cliError.details.requestId ? { request_id: cliError.details.requestId } : {}),
          },
        },
        null,
        2,
      )}\n`,
    );
  } else {
    process.stderr.write(`Error: ${cliError.message}\n`);
    if (cliError.details.hint) process.stderr.write(`Hint: ${cliError.details.hint}\n`);
    if (cliError.details.requestId && cliError.details.status && cliError.details.status >= 500) {
      process.stderr.write(`Request id: ${cliError.details.requestId}\n`);
    }
  }
  process.exit(cliError.exitCode);
}
