import { type ApiError, platformError } from "../errors/api-error.ts";

/** The spec's wording for the two refusals every sign-in entrance shares (section 7, `details.code`). */
export const ACCOUNT_BLOCKED_MESSAGE = "Your account has been suspended.";
export const EMAIL_NOT_VERIFIED_MESSAGE =
  "Your email address is not verified with your sign-in provider. Verify it there, then try again.";

export type PersonRefusal = "email_not_verified" | "account_blocked";

export function personRefusalError(reason: PersonRefusal): ApiError {
  return reason === "account_blocked"
    ? platformError(403, ACCOUNT_BLOCKED_MESSAGE, { details: { code: "ACCOUNT_BLOCKED" } })
    : platformError(403, EMAIL_NOT_VERIFIED_MESSAGE, { details: { code: "PROVIDER_EMAIL_NOT_VERIFIED" } });
}
