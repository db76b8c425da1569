import { type ApiError, platformError } from "../errors/api-error.ts";
import { personRefusalError } from "../identity/identity-errors.ts";
import type { LoginTokenRefusal } from "./login-token-auth.ts";

/** The refusals answered 401, each worded by the route. */
export type UnauthenticatedRefusal = Exclude<LoginTokenRefusal, "account_blocked">;

const loginAgain = "Run `npx affiliate-tracking-service login` to log in.";

/** Spec section 7: `init` follows each 401 with the instruction to log in (again); `programs` does not. */
export const initTokenMessages: Record<UnauthenticatedRefusal, string> = {
  missing: `Authentication required. ${loginAgain}`,
  invalid_or_expired: "Invalid or expired token. Run `npx affiliate-tracking-service login` to log in again.",
  user_not_found: "User not found. Run `npx affiliate-tracking-service login` to log in again.",
};

export const programsTokenMessages: Record<UnauthenticatedRefusal, string> = {
  missing: "Missing Authorization header",
  invalid_or_expired: "Invalid or expired token",
  user_not_found: "User not found",
};

export function loginTokenError(
  messages: Record<UnauthenticatedRefusal, string>,
  reason: LoginTokenRefusal,
): ApiError {
  if (reason === "account_blocked") return personRefusalError("account_blocked");
  return platformError(401, messages[reason]);
}
