import type { ErrorStatus } from "./status.ts";

/**
 * An error the API answers on purpose. `platform` errors render as `{data: null, error: {status, name,
 * message, details, code?}}`; `typed` errors as `{error: {code, message, ...fields}}` plus any top-level
 * fields the spec keeps for that case (the click 410 keeps `success`, `message`, `hint`).
 */
export type ApiErrorInit =
  | {
      envelope: "platform";
      status: ErrorStatus;
      message: string;
      code?: string;
      details?: Record<string, unknown>;
    }
  | {
      envelope: "typed";
      status: ErrorStatus;
      code: string;
      message: string;
      fields?: Record<string, unknown>;
      topLevel?: Record<string, unknown>;
    };

export class ApiError extends Error {
  override name = "ApiError";
  constructor(readonly init: ApiErrorInit) {
    super(init.message);
  }
  get status(): ErrorStatus {
    return this.init.status;
  }
}

/**
 * A 400 for a request body refused before the route has read anything: its JSON schema, text Postgres cannot
 * store, or a value the route refuses before its read (the test event's type). Routes whose key is checked in
 * their read answer a bad key's 401 in its place (`lib/http/key-before-body-refusal.ts`).
 */
export class BodyRefusal extends ApiError {}

export function bodyRefusal(message: string): BodyRefusal {
  return new BodyRefusal({ envelope: "platform", status: 400, message });
}

export function badRequest(message: string, code?: string): ApiError {
  return new ApiError({ envelope: "platform", status: 400, message, ...(code ? { code } : {}) });
}

export function platformError(
  status: ErrorStatus,
  message: string,
  extra: { code?: string; details?: Record<string, unknown> } = {},
): ApiError {
  return new ApiError({ envelope: "platform", status, message, ...extra });
}

export function typedError(
  status: ErrorStatus,
  code: string,
  message: string,
  fields: Record<string, unknown> = {},
  topLevel: Record<string, unknown> = {},
): ApiError {
  return new ApiError({ envelope: "typed", status, code, message, fields, topLevel });
}
