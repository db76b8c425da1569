import { sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import type { PersonFacts } from "./decide-person.ts";

type FactsRow = { id: number; blocked: boolean; email_verified: boolean; live_memberships: number };

/** One read: the account of an email (case-insensitive, as the unique index) and its live memberships. */
export async function readPersonFacts(db: Database, email: string): Promise<PersonFacts | null> {
  const result = await db.execute<FactsRow>(sql`
    select u.id, u.blocked_at is not null as blocked, u.email_verified,
           (select count(*)::int from workspace_members m
             where m.user_id = u.id and m.status <> 'removed') as live_memberships
    from users u where lower(u.email) = lower(${email})`);
  const row = result.rows[0];
  if (!row) return null;
  return {
    userId: Number(row.id),
    blocked: row.blocked === true || String(row.blocked) === "t" || String(row.blocked) === "true",
    emailVerified:
      row.email_verified === true ||
      String(row.email_verified) === "t" ||
      String(row.email_verified) === "true",
    liveMemberships: Number(row.live_memberships),
  };
}

/**
 * One write: the user, a workspace and the owner membership, in one statement. Two first sign-ins of the
 * same email race on `users_email_unique`; the loser re-reads and finds the winner's account.
 */
export async function createPersonWithWorkspace(
  db: Database,
  email: string,
  workspaceName: string,
): Promise<number> {
  const result = await db.execute<{ user_id: number }>(sql`
    with new_user as (
      insert into users (email, email_verified) values (${email}, true) returning id
    ), workspace as (
      insert into advertisers (name) values (${workspaceName}) returning id
    )
    insert into workspace_members (advertiser_id, user_id, role, status)
    select workspace.id, new_user.id, 'owner', 'active' from workspace, new_user
    returning user_id`);
  return Number(result.rows[0]?.user_id);
}

/** An existing person without a workspace gets one they own; a now-verified email is recorded as such. */
export async function completeExistingPerson(
  db: Database,
  userId: number,
  change: { workspaceName: string | null; markVerified: boolean },
): Promise<void> {
  if (change.workspaceName === null && !change.markVerified) return;
  await db.execute(sql`
    with verified as (
      update users set email_verified = true where id = ${userId} and ${change.markVerified}::boolean returning id
    ), workspace as (
      insert into advertisers (name) select ${change.workspaceName}::text where ${change.workspaceName}::text is not null
        and not exists (select 1 from workspace_members where user_id = ${userId} and status <> 'removed')
      returning id
    )
    insert into workspace_members (advertiser_id, user_id, role, status)
    select workspace.id, ${userId}, 'owner', 'active' from workspace`);
}
