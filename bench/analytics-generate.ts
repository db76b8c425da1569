/**
 * `npm run bench:generate`: fills the PostgreSQL of `DATABASE_URL` (a database of its own, migrated here) with
 * one program's events for the analytics bench: `BENCH_CLICKS` clicks (default 10 million) spread over the
 * last 365 days across 50 partners, 100 links, referrers, UTM tags and landing pages, and in proportion one
 * lead per 20 clicks (a quarter provisional), one sale per 100 clicks in USD, EUR or VND with its commission,
 * one refund per 5 sales three days after its sale (none yet for the last three days' sales), and 2% test
 * events of each kind (test leads sent with a key). Every row is made by `generate_series` in SQL, in batches
 * of a million clicks, so 10 million take minutes. Roll the events up afterwards with
 * `npm run analytics:rebuild`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seedDemo } from "../dev/seed.ts";
import { startSqlEndpoint } from "../dev/sql-endpoint.ts";

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl || !/^postgres(ql)?:\/\//i.test(databaseUrl)) {
  console.error(
    "set DATABASE_URL to a postgres:// URL of a database of its own (it is filled with bench data)",
  );
  process.exit(2);
}
const clicks = Number(process.env.BENCH_CLICKS ?? 10_000_000);
if (!Number.isInteger(clicks) || clicks < 1000) {
  console.error("BENCH_CLICKS must be a whole number of at least 1000");
  process.exit(2);
}
const batch = 1_000_000;
const started = Date.now();
const log = (message: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);

const endpoint = await startSqlEndpoint({ databaseUrl, migrationsFolder: "migrations" });
const dataDir = await mkdtemp(join(tmpdir(), "affiliate-bench-generate-"));
try {
  const q = (text: string, params: unknown[] = []) => endpoint.query(text, params);
  const existing = await q("select count(*) as n from affiliate_click_events");
  if (Number(existing.rows[0]?.n) > 0) {
    console.error("the database already holds click events: generate into an empty, migrated database");
    process.exitCode = 2;
  } else {
    const demo = await seedDemo(endpoint, { baseUrl: "http://127.0.0.1:8787", dataDir });
    const program = demo.programs[0];
    if (!program) throw new Error("the demo seed made no program");
    const programId = program.program_id;
    log(`program ${programId}: partners and links`);
    await q(
      `with p as (
         insert into partners (name, email)
         select 'Bench partner ' || g, 'bench-partner-' || g || '@example.com' from generate_series(1, 50) g
         returning id),
       pp as (insert into program_partners (program_id, partner_id, status) select $1, id, 'active' from p)
       insert into referral_links (program_id, partner_id, short_link, is_active)
       select $1, p.id, 'bench' || p.id || '-' || k, true from p cross join generate_series(1, 2) k`,
      [programId],
    );
    const links = await q(
      `select count(*) as n from referral_links where program_id = $1 and short_link like 'bench%'`,
      [programId],
    );
    const linkCount = Number(links.rows[0]?.n);
    // Clicks g = 1..N at evenly spread times over the last 365 days (in insertion order, as in production).
    const span = "365 days";
    for (let from = 1; from <= clicks; from += batch) {
      const to = Math.min(clicks, from + batch - 1);
      await q(
        `with l as (select row_number() over (order by id) - 1 as n, id, partner_id from referral_links
                    where program_id = $1 and short_link like 'bench%')
         insert into affiliate_click_events (click_id, program_id, partner_id, link_id, affiliate_url, referrer, is_test,
                                             created_at, referrer_domain, utm_source, utm_medium, utm_campaign,
                                             landing_page, landing_origin)
         -- The analytics dimensions by the database's functions, the values the worker derives for a click.
         select c.*, analytics_url_host(c.referrer), analytics_url_param(c.affiliate_url, 'utm_source'),
                analytics_url_param(c.affiliate_url, 'utm_medium'), analytics_url_param(c.affiliate_url, 'utm_campaign'),
                analytics_url_page(c.affiliate_url), analytics_url_origin(c.affiliate_url)
         from (select 'bclk_' || g, $1::int, l.partner_id, l.id,
                'https://shop.example' || (array['/', '/pricing', '/blog/launch', '/features', '/docs/start'])[1 + g % 5]
                  || '?aff=x' || case when g % 4 = 3 then '' else
                  '&utm_source=' || (array['google', 'newsletter', 'twitter', 'caf%C3%A9+club', 'bing', 'reddit'])[1 + (g / 7) % 6]
                  || '&utm_medium=' || (array['cpc', 'email', 'social'])[1 + (g / 3) % 3]
                  || '&utm_campaign=spring' || (g / 11) % 12 end,
                case when g % 5 = 0 then null else
                  (array['https://www.google.com/search?q=x', 'https://mail.example.org/inbox', 'https://t.co/abc',
                         'https://blog.example/post', 'https://news.ycombinator.com/item'])[1 + (g / 13) % 5] end,
                g % 50 = 0,
                now() - interval '${span}' + (g::double precision / $3) * interval '${span}'
         from generate_series($4::bigint, $5::bigint) g
         join l on l.n = (g * 7919) % $2) c(click_id, program_id, partner_id, link_id, affiliate_url, referrer, is_test, created_at)`,
        [programId, linkCount, clicks, from, to],
      );
      // A lead per 20 clicks, ten minutes after its click; a quarter of them provisional.
      await q(
        `insert into affiliate_lead_events (program_id, partner_id, click_id, provisional, is_test, via_api_key, created_at)
         select c.program_id, c.partner_id, c.click_id, (c.id / 20) % 4 = 0, (g / 20) % 50 = 7, (g / 20) % 50 = 7,
                c.created_at + interval '10 minutes'
         from generate_series($2::bigint, $3::bigint) g
         join affiliate_click_events c on c.click_id = 'bclk_' || g
         where g % 20 = 0 and c.program_id = $1`,
        [programId, from, to],
      );
      // A sale per 100 clicks (an hour after its click) through its customer, with its commission.
      await q(
        `with c as (
           select c.*, g from generate_series($2::bigint, $3::bigint) g
           join affiliate_click_events c on c.click_id = 'bclk_' || g
           where g % 100 = 0 and c.program_id = $1),
         cu as (
           insert into customers (program_id, partner_id, click_id, clicked_at, status, is_test, created_at, updated_at)
           select program_id, partner_id, click_id, created_at, 'converted', (g / 100) % 50 = 7, created_at, created_at from c
           returning id, click_id),
         s as (
           insert into affiliate_sale_events (processor_event_id, program_id, customer_id, partner_id, amount_cents, currency, is_test, created_at)
           select 'btxn_' || c.g, c.program_id, cu.id, c.partner_id, 1000 + (c.g * 37) % 49000,
                  (array['USD', 'EUR', 'VND'])[1 + (c.g / 100) % 3], (c.g / 100) % 50 = 7, c.created_at + interval '1 hour'
           from c join cu on cu.click_id = c.click_id
           returning id, program_id, partner_id, amount_cents, currency, is_test, created_at)
         insert into commissions (sale_id, program_id, partner_id, amount_cents, currency, status, is_test, created_at)
         select id, program_id, partner_id, amount_cents / 5, currency, 'approved', is_test, created_at from s`,
        [programId, from, to],
      );
      log(`clicks ${from}..${to} with their leads, sales and commissions`);
    }
    // A refund for one sale in five, three days later: refunds change past numbers. A sale of the last three
    // days has no refund yet (dating its refund "now" instead would pile them all into one moment).
    await q(
      `insert into refunds (sale_id, idempotency_key, amount_cents, refunded_total_cents, created_at)
       select s.id, 'bre_' || s.id, s.amount_cents / 3, s.amount_cents / 3, s.created_at + interval '3 days'
       from affiliate_sale_events s
       where s.program_id = $1 and s.id % 5 = 0 and s.created_at + interval '3 days' <= now()`,
      [programId],
    );
    await q(
      `update affiliate_sale_events s set refunded_cents = r.amount_cents from refunds r where r.sale_id = s.id`,
    );
    log("refunds");
    await q("analyze");
    log(`done: program ${programId}, ${clicks} clicks`);
  }
} finally {
  await endpoint.close();
  await rm(dataDir, { recursive: true, force: true });
}
