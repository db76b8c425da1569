/** The spec's status names (section 7) and the stable codes sale and refund add to every error. */
export const statusNames = {
  400: "BadRequestError",
  401: "UnauthorizedError",
  403: "ForbiddenError",
  404: "NotFoundError",
  409: "ConflictError",
  410: "GoneError",
  413: "PayloadTooLargeError",
  422: "UnprocessableEntityError",
  429: "TooManyRequestsError",
  500: "InternalServerError",
} as const;

export type ErrorStatus = keyof typeof statusNames;

export const stableCodeByStatus: Partial<Record<ErrorStatus, string>> = {
  400: "invalid_request",
  401: "unauthorized",
  404: "not_found",
  409: "duplicate_transaction",
  413: "payload_too_large",
  422: "unsupported_currency",
  500: "internal_error",
};
