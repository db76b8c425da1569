import { and, eq, sql } from "drizzle-orm";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { createSession } from "../../lib/auth/session-store.ts";
import { issueSignInToken } from "../../lib/auth/sign-in-tokens.ts";
import { programs, signInTokens, users, workspaceMembers } from "../../schema/index.ts";
import { call, signedInCookie } from "./dashboard-sign-in.ts";
import { createProgram, db, type ProgramFixture, unique } from "./harness.ts";

export { BASE, call, type LooseJson } from "./dashboard-sign-in.ts";

export interface Person {
  email: string;
  /** The dashboard sign-in token (the session cookie's value; also accepted as Bearer). */
  token: string;
  userId: number;
  advertiserId: number;
}

/** Signs a new person in through the local provider: their first sign-in makes their own workspace. */
export async function signInPerson(): Promise<Person> {
  const email = `${unique("owner")}@people.example`;
  const token = await signedInCookie({ email, verified: true });
  const [user] = await db.select().from(users).where(sql`lower(${users.email}) = ${email.toLowerCase()}`);
  const [member] = await db.select().from(workspaceMembers).where(eq(workspaceMembers.userId, user!.id));
  return { email, token, userId: user!.id, advertiserId: member!.advertiserId };
}

/** A program (partners, links, keys) in this person's workspace. */
export async function programOf(person: Person, options: Parameters<typeof createProgram>[0] = {}) {
  const fixture = await createProgram(options);
  await db
    .update(programs)
    .set({ advertiserId: person.advertiserId })
    .where(eq(programs.id, fixture.programId));
  return fixture;
}

export async function setMembershipStatus(person: Person, status: "active" | "removed" | "invited") {
  await db
    .update(workspaceMembers)
    .set({ status })
    .where(
      and(eq(workspaceMembers.userId, person.userId), eq(workspaceMembers.advertiserId, person.advertiserId)),
    );
}

/**
 * Another sign-in token of the same person, stored as the sign-in route stores one: the write routes allow
 * 20 calls a minute per token, so a long table of cases takes a token each.
 */
export async function anotherToken(person: Person): Promise<string> {
  const issued = await issueSignInToken();
  await createSession(db, person.userId, issued.tokenHash, new Date());
  return issued.token;
}

export async function expireToken(token: string) {
  await db
    .update(signInTokens)
    .set({ expiresAt: new Date(Date.now() - 1000) })
    .where(eq(signInTokens.tokenHash, await sha256Hex(token)));
}

/** The seven routes, each with a valid request for `programId` (path, or `program_id` in the body). */
export function dashboardRoutes(programId: number) {
  return [
    { name: "status", method: "GET", path: `/api/tracking/status/${programId}` },
    { name: "events", method: "GET", path: `/api/tracking/events/${programId}` },
    { name: "performance", method: "GET", path: `/api/tracking/performance/${programId}` },
    { name: "readiness", method: "GET", path: `/api/tracking/readiness/${programId}` },
    {
      name: "test",
      method: "POST",
      path: "/api/tracking/test",
      body: { program_id: programId, event_type: "click" },
    },
    {
      name: "check-test-events",
      method: "POST",
      path: "/api/tracking/check-test-events",
      body: { program_id: programId, events: [{ kind: "click", id: "nope" }] },
    },
    { name: "run-verification", method: "POST", path: `/api/tracking/run-verification/${programId}` },
  ] as const;
}

export type DashboardRoute = ReturnType<typeof dashboardRoutes>[number];

export const SAME_ORIGIN = "https://api.test";

/** Calls a dashboard route as the page does (cookie, same Origin on writes) or as a script (Bearer). */
export function callRoute(
  route: DashboardRoute,
  auth: { cookie?: string; token?: string; origin?: string | null },
) {
  const origin = auth.origin === null ? undefined : (auth.origin ?? (auth.cookie ? SAME_ORIGIN : undefined));
  return call(route.method, route.path, {
    ...(auth.cookie ? { cookie: auth.cookie } : {}),
    ...(auth.token ? { token: auth.token } : {}),
    ...(origin ? { origin } : {}),
    ...("body" in route ? { body: route.body } : {}),
  });
}

export type { ProgramFixture };
