import { sql } from "drizzle-orm";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { createProgram } from "../../lib/programs/create-program.ts";
import { workspaceMembers } from "../../schema/index.ts";
import { call, signedInCookie } from "./dashboard-sign-in.ts";
import { db, unique } from "./harness.ts";

/** A person signed in through the local provider: their sign-in token and their own workspace. */
export interface Person {
  token: string;
  userId: number;
  advertiserId: number;
}

export async function signedInPerson(): Promise<Person> {
  const token = await signedInCookie({ email: `${unique("brand")}@people.example`, verified: true });
  const session = await call("GET", "/api/v1/auth/session", { token });
  if (session.status !== 200) throw new Error(`session answered ${session.status}`);
  return {
    token,
    userId: session.body.data.user.id,
    advertiserId: session.body.data.workspaces[0].advertiser_id,
  };
}

export interface OwnedProgram extends Person {
  programId: number;
  apiKey: string;
  testApiKey: string;
}

/** A signed-in owner with one program made by the create-program use case (keys shown once, here). */
export async function ownerWithProgram(): Promise<OwnedProgram> {
  const person = await signedInPerson();
  const created = await createProgram(db, {
    userId: person.userId,
    fields: {
      name: unique("program"),
      domain: "shop.example.com",
      commissionType: "percent",
      commissionRate: "20",
      durationMonths: 0,
      attributionWindowDays: 60,
    },
  });
  if (!created.ok) throw new Error(`create program refused: ${created.reason}`);
  return { ...person, programId: created.programId, apiKey: created.apiKey, testApiKey: created.testApiKey };
}

/** Adds a person to a workspace with a role and status. */
export async function addMember(
  advertiserId: number,
  userId: number,
  role: "owner" | "admin" | "member",
  status: "active" | "invited" | "removed" = "active",
): Promise<void> {
  await db.insert(workspaceMembers).values({ advertiserId, userId, role, status });
}

/** Ends a sign-in token's life as if its time had run out. */
export async function expireToken(token: string): Promise<void> {
  const hash = await sha256Hex(token);
  await db.execute(
    sql`update sign_in_tokens set expires_at = now() - interval '1 minute' where token_hash = ${hash}`,
  );
}

export function platform(status: number, message: string) {
  const names: Record<number, string> = {
    400: "BadRequestError",
    401: "UnauthorizedError",
    403: "ForbiddenError",
    404: "NotFoundError",
    409: "ConflictError",
  };
  return { data: null, error: { status, name: names[status], message, details: {} } };
}
