import { sha256Hex } from "../auth/api-keys.ts";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/env.ts";
import type { Database } from "../db/client.ts";
import type { PersonRefusal } from "../identity/identity-errors.ts";
import { issuerMetadata } from "../identity/issuer-discovery.ts";
import { issuerKeys } from "../identity/issuer-keys.ts";
import { resolvePerson } from "../identity/resolve-person.ts";
import { type IdTokenVerdict, verifyIdToken } from "../identity/verify-id-token.ts";
import {
  type LoginSessionRow,
  markLoginCompleted,
  markLoginRefused,
  readLoginSession,
} from "./login-session-store.ts";

export type CompleteLoginResult =
  | {
      outcome: "refused";
      reason: "session_not_found" | "session_expired" | "invalid_id_token" | PersonRefusal;
    }
  | { outcome: "completed"; userCode: string };

/**
 * `auth/callback`: the sign-in page hands over the session's state and the provider's ID token. The
 * session must exist, be unused and younger than 5 minutes; the token must verify (signature, issuer,
 * audience, age); the person is resolved as every sign-in does (unverified email refused first, then a
 * blocked account; a refusal is recorded on the session, which ends it, for its poll); then the session is
 * bound to the person in one guarded update (pending -> completed), so a state can be used once even when
 * two callbacks race, and an ID token completes one session only.
 */
export async function completeLogin(
  db: Database,
  clock: Clock,
  config: Config,
  input: { state: string; idToken: string },
): Promise<CompleteLoginResult> {
  if (!config.identity) throw new Error("no OpenID provider configured (OIDC_ISSUER, OIDC_CLIENT_ID)");
  const identity = config.identity;
  const now = clock.now();
  const open = openSession(await readLoginSession(db, await sha256Hex(input.state)), now);
  if (!open.ok) return { outcome: "refused", reason: open.reason };
  const { session } = open;

  const keys = await issuerKeys(identity);
  // Only the signing algorithms the provider announces (discovery), as the dashboard's sign-in checks.
  const { idTokenAlgorithms: algorithms } = await issuerMetadata(identity);
  // The sign-in page may be the dashboard's (its client) or the tool's own loopback flow (the CLI client).
  const audiences = [identity.clientId, ...(config.cliClientId ? [config.cliClientId] : [])];
  let verdict: IdTokenVerdict = { ok: false, reason: "invalid_id_token" };
  for (const audience of audiences) {
    verdict = await verifyIdToken(input.idToken, {
      issuer: identity.issuer,
      audience,
      keys,
      algorithms,
      now,
    });
    if (verdict.ok) break;
  }
  if (!verdict.ok) return { outcome: "refused", reason: "invalid_id_token" };

  const person = await resolvePerson(db, verdict.claims);
  if (!person.ok) {
    await markLoginRefused(db, session.id, person.reason, now);
    return { outcome: "refused", reason: person.reason };
  }

  const bound = await markLoginCompleted(db, session.id, person.userId, now, await sha256Hex(input.idToken));
  // An ID token completed another session already: replayed, it is no credential for this one.
  if (bound === "id_token_used") return { outcome: "refused", reason: "invalid_id_token" };
  if (bound === "not_open") return { outcome: "refused", reason: "session_not_found" };
  return { outcome: "completed", userCode: session.userCode };
}

export type CompleteLoginForPersonResult =
  | { outcome: "refused"; reason: "session_not_found" | "session_expired" }
  /** The login the link's cookie names is not the one whose code the approval page showed. */
  | { outcome: "refused"; reason: "code_mismatch" }
  | { outcome: "completed"; userCode: string };

/**
 * The browser path of a command-line login, first step: the person opened the tool's sign-in link
 * (`/cli/login`) and signed in to the dashboard. Nothing is bound yet: whoever sends a person a link they
 * started themselves would otherwise be handed that person's login token by one click (the provider signs a
 * person in again without asking). The page asks them to approve the code their own terminal shows; this
 * says whether the link's session is still open, and its code.
 */
export async function loginAwaitingApproval(
  db: Database,
  clock: Clock,
  input: { browserSecret: string },
): Promise<
  | { outcome: "awaiting_approval"; userCode: string }
  | { outcome: "refused"; reason: "session_not_found" | "session_expired" }
> {
  const open = openSession(await readLinkedSession(db, input.browserSecret), clock.now());
  if (!open.ok) return { outcome: "refused", reason: open.reason };
  return { outcome: "awaiting_approval", userCode: open.session.userCode };
}

/**
 * The browser path's second step: the signed-in person approved the code the page showed them
 * (`POST /cli/login/approve`). Binds the login session the link carried to them, under the same rules as
 * `auth/callback`, when it is the one with that code.
 */
export async function completeLoginForPerson(
  db: Database,
  clock: Clock,
  input: { browserSecret: string; userId: number; shownCode: string },
): Promise<CompleteLoginForPersonResult> {
  const now = clock.now();
  const open = openSession(await readLinkedSession(db, input.browserSecret), now);
  if (!open.ok) return { outcome: "refused", reason: open.reason };
  const { session } = open;
  if (session.userCode !== input.shownCode) return { outcome: "refused", reason: "code_mismatch" };
  if ((await markLoginCompleted(db, session.id, input.userId, now)) !== "completed") {
    return { outcome: "refused", reason: "session_not_found" };
  }
  return { outcome: "completed", userCode: session.userCode };
}

/**
 * The browser path's refusal: the person who signed in through the tool's link is refused (suspended, or an
 * unverified provider email). Recorded on the login session the link carried, which it ends, so the tool's
 * poll answers the same 403 and stops waiting. Whether the session was open and is now ended refused.
 */
export async function refuseLoginForPerson(
  db: Database,
  clock: Clock,
  input: { browserSecret: string; reason: PersonRefusal },
): Promise<boolean> {
  const now = clock.now();
  const open = openSession(await readLinkedSession(db, input.browserSecret), now);
  return open.ok && (await markLoginRefused(db, open.session.id, input.reason, now));
}

/** The session a sign-in link's secret (`/cli/login?login=...`) belongs to. */
async function readLinkedSession(db: Database, browserSecret: string): Promise<LoginSessionRow | undefined> {
  return readLoginSession(db, await sha256Hex(browserSecret), "browser");
}

/**
 * A session can be completed while it is pending, not refused and younger than its 5 minutes. A refused one
 * is over: the tool's poll told it so and it stopped polling, so no later sign-in may complete it.
 */
function openSession(
  session: LoginSessionRow | undefined,
  now: Date,
): { ok: true; session: LoginSessionRow } | { ok: false; reason: "session_not_found" | "session_expired" } {
  if (session?.status !== "pending" || session.refused) return { ok: false, reason: "session_not_found" };
  if (session.expiresAt.getTime() <= now.getTime()) return { ok: false, reason: "session_expired" };
  return { ok: true, session };
}
