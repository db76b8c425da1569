import { SELF } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { neonConfig } from "../../lib/db/sql-over-http.ts";
import { cliLoginSessions } from "../../schema/cli-login.ts";
import { advertisers, users, workspaceMembers } from "../../schema/workspaces.ts";
import { db, freshIp, unique } from "./harness.ts";

export interface CliResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** A command-line call as the tool makes it: JSON in and out, a fresh client IP unless given. */
export async function cli(
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string>; ip?: string } = {},
): Promise<CliResponse> {
  const headers: Record<string, string> = {
    "CF-Connecting-IP": options.ip ?? freshIp(),
    ...(options.token !== undefined ? { Authorization: `Bearer ${options.token}` } : {}),
    ...(options.body !== undefined ? { "Content-Type": "application/json" } : {}),
    ...options.headers,
  };
  const response = await SELF.fetch(`https://api.test${path}`, {
    method,
    headers,
    body:
      options.body === undefined
        ? undefined
        : typeof options.body === "string"
          ? options.body
          : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
}

/** A person with a workspace they own (what a first verified sign-in provisions). */
export async function createPerson(options: { blocked?: boolean; workspace?: boolean } = {}) {
  const [user] = await db
    .insert(users)
    .values({
      email: `${unique("dev")}@brand.example`,
      emailVerified: true,
      blockedAt: options.blocked ? new Date() : null,
    })
    .returning();
  let workspaceId: number | null = null;
  if (options.workspace !== false) {
    const [workspace] = await db
      .insert(advertisers)
      .values({ name: unique("workspace") })
      .returning();
    workspaceId = workspace!.id;
    await db.insert(workspaceMembers).values({ advertiserId: workspaceId, userId: user!.id, role: "owner" });
  }
  return { userId: user!.id, email: user!.email, workspaceId };
}

/** Stands in for a finished sign-in when a test is about polling, not about the provider. */
export async function markSignedIn(state: string, userId: number): Promise<void> {
  await db
    .update(cliLoginSessions)
    .set({ status: "completed", userId, completedAt: new Date() })
    .where(eq(cliLoginSessions.stateHash, await sha256Hex(state)));
}

export async function ageSession(state: string, byMs: number): Promise<void> {
  const [row] = await db
    .select()
    .from(cliLoginSessions)
    .where(eq(cliLoginSessions.stateHash, await sha256Hex(state)));
  await db
    .update(cliLoginSessions)
    .set({ expiresAt: new Date(row!.expiresAt.getTime() - byMs) })
    .where(eq(cliLoginSessions.id, row!.id));
}

export async function startSession(): Promise<{ state: string; body: Record<string, unknown> }> {
  const started = await cli("POST", "/api/v1/cli/auth/start");
  const data = started.body.data as { state: string };
  return { state: data.state, body: started.body };
}

/** A login token, the way the tool gets one: start, sign in, poll. */
export async function loginTokenFor(userId: number): Promise<string> {
  const { state } = await startSession();
  await markSignedIn(state, userId);
  const polled = await cli("GET", `/api/v1/cli/auth/poll?state=${encodeURIComponent(state)}`);
  return (polled.body.data as { token: string }).token;
}

/**
 * Makes every database round trip of this isolate fail (the worker runs in the test's isolate), to show
 * the routes' 500s. Returns the function that restores the driver.
 */
export function breakDatabase(): () => void {
  const previous = neonConfig.fetchFunction;
  neonConfig.fetchFunction = () => Promise.reject(new Error("database unreachable (test)"));
  return () => {
    neonConfig.fetchFunction = previous;
  };
}

export function platform(
  status: number,
  name: string,
  message: string,
  details: Record<string, unknown> = {},
) {
  return { data: null, error: { status, name, message, details } };
}
