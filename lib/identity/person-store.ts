import { sql } from "drizzle-orm";
import { advertisers, users, workspaceMembers } from "../../schema/workspaces.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName, fromDriver } from "../db/columns.ts";
import type { PersonFacts } from "./decide-person.ts";

type FactsRow = { id: number; blocked: boolean; email_verified: boolean; live_memberships: number };

const u = users;
const m = workspaceMembers;

/** One read: the account of an email (case-insensitive, as the unique index) and its live memberships. */
export async function readPersonFacts(db: Database, email: string): Promise<PersonFacts | null> {
  const result = await db.execute<FactsRow>(sql`
    select ${u.id} as id, ${u.blockedAt} is not null as blocked, ${u.emailVerified} as email_verified,
           (select count(*)::int from ${m}
             where ${m.userId} = ${u.id} and ${m.status} <> 'removed') as live_memberships
    from ${u} where lower(${u.email}) = lower(${email})`);
  const row = result.rows[0];
  if (!row) return null;
  return {
    userId: fromDriver(u.id, row.id),
    blocked: row.blocked,
    emailVerified: fromDriver(u.emailVerified, row.email_verified),
    liveMemberships: row.live_memberships,
  };
}

/**
 * One write: the user, a workspace and the owner membership, in one statement. Two first sign-ins of the
 * same email race on `userEmailUniqueIndex`; the loser re-reads and finds the winner's account.
 */
export async function createPersonWithWorkspace(
  db: Database,
  email: string,
  workspaceName: string,
): Promise<number> {
  const result = await db.execute<{ user_id: number }>(sql`
    with new_user as (
      insert into ${u} (${columnList(u.email, u.emailVerified)}) values (${email}, true) returning ${u.id} as id
    ), workspace as (
      insert into ${advertisers} (${columnList(advertisers.name)}) values (${workspaceName}) returning ${advertisers.id} as id
    )
    insert into ${m} (${columnList(m.advertiserId, m.userId, m.role, m.status)})
    select workspace.id, new_user.id, 'owner', 'active' from workspace, new_user
    returning ${m.userId} as user_id`);
  return fromDriver(m.userId, result.rows[0]?.user_id);
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
      update ${u} set ${columnName(u.emailVerified)} = true
       where ${u.id} = ${userId} and ${change.markVerified}::boolean returning ${u.id}
    ), workspace as (
      insert into ${advertisers} (${columnList(advertisers.name)})
      select ${change.workspaceName}::text where ${change.workspaceName}::text is not null
        and not exists (select 1 from ${m} where ${m.userId} = ${userId} and ${m.status} <> 'removed')
      returning ${advertisers.id} as id
    )
    insert into ${m} (${columnList(m.advertiserId, m.userId, m.role, m.status)})
    select workspace.id, ${userId}, 'owner', 'active' from workspace`);
}
