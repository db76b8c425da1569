import { CliError, exitCodeForStatus, exitCodes } from "./exit-codes.ts";

/** The local stack's address (`npm run dev`); `--base-url` or AFFILIATE_TRACKING_BASE_URL point elsewhere. */
export const defaultBaseUrl = "http://127.0.0.1:8787";

/** A notice the service adds to an answer (spec: key rotation), such as `api_key_rotation_required`. */
export interface ApiWarning {
  code: string;
  message: string;
  hint?: string;
  rotate_by?: string;
  docs_url?: string;
}

export interface ApiAnswer<T> {
  status: number;
  data: T;
  body: Record<string, unknown>;
  /** The answer's top-level `warnings` (a key due for rotation), empty when it has none. */
  warnings: ApiWarning[];
}

function warningsOf(body: Record<string, unknown>): ApiWarning[] {
  if (!Array.isArray(body.warnings)) return [];
  return body.warnings.filter(
    (w): w is ApiWarning =>
      typeof w === "object" && w !== null && typeof w.code === "string" && typeof w.message === "string",
  );
}

/**
 * One call to `/api/v1/cli/*`. A refusal becomes a `CliError` quoting the server's message (and hint, code,
 * request id when it sent them) with the exit code its status means.
 */
export async function callApi<T>(
  baseUrl: string,
  method: "GET" | "POST",
  path: string,
  options: { token?: string; body?: unknown } = {},
): Promise<ApiAnswer<T>> {
  let response: Response;
  try {
    response = await fetch(new URL(path, baseUrl), {
      method,
      headers: {
        Accept: "application/json",
        "User-Agent": "affiliate-tracking-service-cli",
        ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
        ...(options.body !== undefined ? { "Content-Type": "application/json" } : {}),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch (error) {
    throw new CliError(
      `Cannot reach ${baseUrl} (${(error as Error).message}). Is the service running? Set --base-url otherwise.`,
      exitCodes.failure,
    );
  }
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    throw new CliError(
      `Unexpected answer from ${baseUrl} (HTTP ${response.status}, not JSON)`,
      exitCodes.failure,
    );
  }
  if (response.ok) {
    return { status: response.status, data: body.data as T, body, warnings: warningsOf(body) };
  }
  const error = (body.error ?? {}) as {
    message?: string;
    hint?: string;
    code?: string;
    details?: { code?: string; request_id?: string };
  };
  throw new CliError(error.message ?? `HTTP ${response.status}`, exitCodeForStatus(response.status), {
    status: response.status,
    hint: error.hint,
    code: error.code ?? error.details?.code,
    requestId: error.details?.request_id ?? response.headers.get("X-Request-ID") ?? undefined,
  });
}
