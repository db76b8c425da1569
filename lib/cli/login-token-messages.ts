import { type ApiError, platformError } from "../errors/api-error.ts";
import type { LoginTokenRefusal } from "./login-token-auth.ts";

const loginAgain = "Run `npx affiliate-tracking-service login` to log in.";

/** Spec section 7: `init` follows each 401 with the instruction to log in (again); `programs` does not. */
export const initTokenMessages: Record<LoginTokenRefusal, string> = {
  missing: `Authentication required. ${loginAgain}`,
  invalid_or_expired: "Invalid or expired token. Run `npx affiliate-tracking-service login` to log in again.",
  user_not_found: "User not found. Run `npx affiliate-tracking-service login` to log in again.",
};

export const programsTokenMessages: Record<LoginTokenRefusal, string> = {
  missing: "Missing Authorization header",
  invalid_or_expired: "Invalid or expired token",
  user_not_found: "User not found",
};

export function loginTokenError(
  messages: Record<LoginTokenRefusal, string>,
  reason: LoginTokenRefusal,
): ApiError {
  return platformError(401, messages[reason]);
}
