import { userEmailUniqueIndex } from "../../schema/workspaces.ts";
import type { Database } from "../db/client.ts";
import { withConflictRetry } from "../db/errors.ts";
import { decideEmailCheck, decidePerson, defaultWorkspaceName } from "./decide-person.ts";
import type { PersonRefusal } from "./identity-errors.ts";
import { completeExistingPerson, createPersonWithWorkspace, readPersonFacts } from "./person-store.ts";
import type { IdTokenClaims } from "./verify-id-token.ts";

export type ResolvedPerson =
  | { ok: true; userId: number; created: boolean }
  | { ok: false; reason: PersonRefusal };

/**
 * From verified ID token claims to the service's person. Used by every sign-in entrance (dashboard
 * callback, command-line callback). The unverified-email refusal happens before any database access.
 */
export async function resolvePerson(db: Database, claims: IdTokenClaims): Promise<ResolvedPerson> {
  const emailCheck = decideEmailCheck(claims);
  if (!emailCheck.ok) return emailCheck;
  const email = emailCheck.email;
  return withConflictRetry(
    async (): Promise<ResolvedPerson> => {
      const decision = decidePerson(email, await readPersonFacts(db, email));
      switch (decision.kind) {
        case "refused":
          return { ok: false, reason: decision.reason };
        case "new":
          return {
            ok: true,
            userId: await createPersonWithWorkspace(db, email, defaultWorkspaceName(email)),
            created: true,
          };
        case "existing":
          await completeExistingPerson(db, decision.userId, {
            workspaceName: decision.createWorkspace ? defaultWorkspaceName(email) : null,
            markVerified: decision.markVerified,
          });
          return { ok: true, userId: decision.userId, created: false };
      }
    },
    { retryOnConstraints: [userEmailUniqueIndex] },
  );
}
