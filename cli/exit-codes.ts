/**
 * Exit codes scripts can rely on (README: "The command-line tool"). Anything else than 0 is a failure; the
 * code says which kind, so a script can tell "log in again" from "fix the input" from "retry later".
 */
export const exitCodes = {
  ok: 0,
  /** The server failed (5xx), or the tool met an unexpected error. Retry with backoff. */
  failure: 1,
  /** Missing or invalid input (a flag, a prompt answer, `--no-interactive` with something missing). */
  usage: 2,
  /** Not logged in, the login token expired or was revoked, or the API key was refused (401). */
  unauthenticated: 3,
  /** The server refused the request (400, 403, 404, 409, 410, 422): fix it, do not retry unchanged. */
  refused: 4,
  /** Rate limited (429), including the synthetic chain cap. Retry after the wait. */
  rateLimited: 5,
  /**
   * The login session expired before sign-in, the test chain had a failing step, or `init` created the program
   * but could not write its project file (the key is in the message: do not run init again).
   */
  incomplete: 6,
} as const;

export class CliError extends Error {
  override name = "CliError";
  constructor(
    message: string,
    readonly exitCode: number,
    readonly details: { status?: number; hint?: string; code?: string; requestId?: string } = {},
  ) {
    super(message);
  }
}

export function exitCodeForStatus(status: number): number {
  if (status === 401) return exitCodes.unauthenticated;
  if (status === 429) return exitCodes.rateLimited;
  if (status >= 500) return exitCodes.failure;
  return exitCodes.refused;
}
