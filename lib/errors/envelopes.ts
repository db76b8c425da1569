import type { ApiError } from "./api-error.ts";
import { stableCodeByStatus, statusNames } from "./status.ts";

export interface ErrorPolicy {
  /** Generic message of this route's 500 (never the internal error's text). */
  failureMessage: string;
  /** Sale and refund: every platform error carries a stable `error.code`. */
  stableCodes: boolean;
  /** Routes whose 500 is in the typed envelope (readiness: `internal_error` with `retry_after_seconds`). */
  typedFailure?: { code: string; fields: Record<string, unknown> };
  /** `error.details` of this route's 500 (the command-line routes repeat the request id there). */
  failureDetails?: Record<string, unknown>;
}

export const defaultErrorPolicy: ErrorPolicy = {
  failureMessage: "Internal server error",
  stableCodes: false,
};

export function renderError(error: ApiError, policy: ErrorPolicy): Record<string, unknown> {
  const init = error.init;
  if (init.envelope === "typed") {
    return { ...init.topLevel, error: { code: init.code, message: init.message, ...init.fields } };
  }
  const code = init.code ?? (policy.stableCodes ? stableCodeByStatus[init.status] : undefined);
  return {
    data: null,
    error: {
      status: init.status,
      name: statusNames[init.status],
      message: init.message,
      details: init.details ?? {},
      ...(code ? { code } : {}),
    },
  };
}
