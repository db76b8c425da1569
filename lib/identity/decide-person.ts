import type { PersonRefusal } from "./identity-errors.ts";
import type { IdTokenClaims } from "./verify-id-token.ts";

/** What the database says about the email that signed in (one read). */
export interface PersonFacts {
  userId: number;
  blocked: boolean;
  emailVerified: boolean;
  /** Memberships that are not removed (active or invited). */
  liveMemberships: number;
}

export type PersonDecision =
  | { kind: "refused"; reason: PersonRefusal }
  | { kind: "existing"; userId: number; createWorkspace: boolean; markVerified: boolean }
  | { kind: "new"; email: string };

/**
 * The sign-in rules, in the spec's order: the provider must vouch for the email BEFORE any account is
 * looked at (so an unverified email learns nothing about accounts); then a blocked account is refused;
 * then a person without a workspace gets one they own (first sign-in of a new email creates the user too).
 * `facts` is only consulted after the email check; callers pass a thunk so no lookup happens before it.
 */
export function decideEmailCheck(
  claims: IdTokenClaims,
): { ok: true; email: string } | { ok: false; reason: PersonRefusal } {
  if (!claims.emailVerified || claims.email === null) return { ok: false, reason: "email_not_verified" };
  return { ok: true, email: claims.email };
}

export function decidePerson(email: string, facts: PersonFacts | null): PersonDecision {
  if (!facts) return { kind: "new", email };
  if (facts.blocked) return { kind: "refused", reason: "account_blocked" };
  return {
    kind: "existing",
    userId: facts.userId,
    createWorkspace: facts.liveMemberships === 0,
    markVerified: !facts.emailVerified,
  };
}

/** A new workspace's name: the email's local part, which the owner can rename later. */
export function defaultWorkspaceName(email: string): string {
  const local = email.split("@")[0] || "My";
  return `${local.slice(0, 60)}'s workspace`;
}
