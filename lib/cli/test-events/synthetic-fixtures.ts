import { sql } from "drizzle-orm";
import { cliSyntheticChains } from "../../../schema/cli-login.ts";
import { partners, programPartners, referralLinks } from "../../../schema/partners.ts";
import { programs } from "../../../schema/programs.ts";
import type { Database } from "../../db/client.ts";
import { columnList, columnName, fromDriverOrNull } from "../../db/columns.ts";
import { syntheticLinkCode } from "../../programs/synthetic-link-code.ts";

/** Spec section 8: at most 10 synthetic chains per program per hour. */
export const chainCapPerHour = 10;
const hourMs = 60 * 60 * 1000;
/** Namespace of the advisory lock that serialises chain starts of one program. */
const chainLockNamespace = 724_011;

export interface Fixtures {
  domain: string;
  linkCode: string;
}

export type ChainSlot = { granted: true } | { granted: false; retryAfterSeconds: number };

/**
 * The program's verification fixtures: a partner, its membership and a referral link only test events
 * use, created on first use and refreshed (re-activated) after, so a test click always has a working
 * link. The link is `test_only`: a live click on it is refused as an unknown link, so no live visitor is
 * attributed to the fixture partner through it. A link code taken by another program is never touched (the
 * refresh is guarded by program).
 */
function ensureFixtures(db: Database, programId: number) {
  const email = `synthetic-verification+p${programId}@fixtures.invalid`;
  const code = syntheticLinkCode(programId);
  const pp = programPartners;
  const l = referralLinks;
  return db.execute(sql`
    with inserted as (
      insert into ${partners} (${columnList(partners.name, partners.email)})
      values ('Synthetic verification partner', ${email})
      on conflict do nothing returning ${partners.id} as id
    ), partner as (
      select id from inserted
      union all select ${partners.id} from ${partners} where lower(${partners.email}) = ${email}
      limit 1
    ), membership as (
      insert into ${pp} (${columnList(pp.programId, pp.partnerId)}) select ${programId}, id from partner
      on conflict (${columnList(pp.programId, pp.partnerId)}) do update set ${columnName(pp.status)} = 'active'
    ), link as (
      insert into ${l} (${columnList(l.programId, l.partnerId, l.shortLink, l.testOnly)})
      select ${programId}, id, ${code}, true from partner
      on conflict (${columnList(l.shortLink)}) do update
        set ${columnName(l.isActive)} = true, ${columnName(l.disabledAt)} = null,
            ${columnName(l.partnerId)} = excluded.${columnName(l.partnerId)}, ${columnName(l.testOnly)} = true
      where ${l.programId} = excluded.${columnName(l.programId)}
      returning ${l.shortLink} as short_link
    )
    select (select short_link from link) as link_code,
           (select ${programs.domain} from ${programs} where ${programs.id} = ${programId}) as domain`);
}

/**
 * One round trip, one transaction: refresh the fixtures, then take a chain slot if fewer than 10 chains
 * started in the last hour. The advisory lock makes two concurrent starts count one after the other, so
 * the cap holds under races. The fixtures are refreshed even when the cap refuses (as the spec allows).
 */
export async function prepareChain(
  db: Database,
  programId: number,
  now: Date,
  options: { takeChainSlot: boolean },
): Promise<{ fixtures: Fixtures; slot: ChainSlot }> {
  const since = new Date(now.getTime() - hourMs).toISOString();
  const fixtures = ensureFixtures(db, programId);
  if (!options.takeChainSlot) {
    const [rows] = await db.batch([fixtures]);
    return { fixtures: fixturesFrom(rows.rows[0]), slot: { granted: true } };
  }
  const [, fixtureRows, windowRows, inserted] = await db.batch([
    db.execute(sql`select pg_advisory_xact_lock(${chainLockNamespace}, ${programId})`),
    fixtures,
    db.execute(sql`
      select count(*)::int as started, min(${cliSyntheticChains.startedAt}) as oldest from ${cliSyntheticChains}
      where ${cliSyntheticChains.programId} = ${programId} and ${cliSyntheticChains.startedAt} > ${since}::timestamptz`),
    db.execute(sql`
      insert into ${cliSyntheticChains} (${columnList(cliSyntheticChains.programId, cliSyntheticChains.startedAt)})
      select ${programId}, ${now.toISOString()}::timestamptz
      where (select count(*) from ${cliSyntheticChains}
             where ${cliSyntheticChains.programId} = ${programId}
               and ${cliSyntheticChains.startedAt} > ${since}::timestamptz) < ${chainCapPerHour}
      returning ${cliSyntheticChains.id}`),
  ]);
  const result = { fixtures: fixturesFrom(fixtureRows.rows[0]) };
  if (inserted.rows.length > 0) return { ...result, slot: { granted: true } };
  const oldest = fromDriverOrNull(cliSyntheticChains.startedAt, windowRows.rows[0]?.oldest);
  const freeAt = (oldest?.getTime() ?? now.getTime()) + hourMs;
  return {
    ...result,
    slot: { granted: false, retryAfterSeconds: Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000)) },
  };
}

function fixturesFrom(row: Record<string, unknown> | undefined): Fixtures {
  const linkCode = fromDriverOrNull(referralLinks.shortLink, row?.link_code);
  const domain = fromDriverOrNull(programs.domain, row?.domain);
  if (!linkCode || !domain) throw new Error("verification fixtures could not be prepared");
  return { linkCode, domain };
}
