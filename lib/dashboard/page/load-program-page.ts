import { parseAnalyticsQuery } from "../../analytics/analytics-request.ts";
import type { AnalyticsReport } from "../../analytics/build-report.ts";
import { requireProgramMembership } from "../../auth/require-program-membership.ts";
import type { Clock } from "../../clock.ts";
import type { Database } from "../../db/client.ts";
import { type LinkRow, listReferralLinks } from "../../programs/referral-links.ts";
import { readProgramSettings } from "../../programs/settings-store.ts";
import { settingsView } from "../../programs/settings-view.ts";
import type { ReadinessVerdict } from "../../readiness/decide-readiness.ts";
import { readReadiness } from "../../readiness/read-readiness.ts";
import { parseEventsQuery } from "../events-query.ts";
import { type PerformanceReport, parsePerformanceQuery, readPerformance } from "../performance.ts";
import { type EventsPage, readRecentEvents } from "../recent-events.ts";
import { readProgramAnalytics } from "./program-analytics.ts";
import { type ProgramPartner, readActivePartners } from "./program-partners.ts";

/** The source dimensions the page's analytics table offers (the analytics route's `group_by` values). */
export const pageDimensions = [
  "partner",
  "link",
  "referrer_domain",
  "utm_source",
  "utm_medium",
  "utm_campaign",
  "landing_page",
] as const;
export type PageDimension = (typeof pageDimensions)[number];

export interface ProgramPageRequest {
  userId: number;
  programId: number;
  /** Analytics table grouping; the page falls back to `partner` for anything else. */
  groupBy: PageDimension;
}

export interface ProgramPage {
  role: string;
  readiness: ReadinessVerdict;
  settings: ReturnType<typeof settingsView>;
  links: LinkRow[];
  partners: ProgramPartner[];
  events: EventsPage;
  performance: PerformanceReport;
  analytics: AnalyticsReport;
}

const recentEventsShown = 12;

/**
 * Everything the program view shows, read side by side once the membership is confirmed. Null when the
 * person has no active membership on the program's workspace (or no such program): the page refuses both
 * alike, as the routes do. Ranges are the last 30 days in UTC, as the routes' defaults.
 */
export async function loadProgramPage(
  db: Database,
  clock: Clock,
  request: ProgramPageRequest,
): Promise<ProgramPage | null> {
  const { userId, programId } = request;
  const membership = await requireProgramMembership(db, userId, programId);
  if (!membership.ok) return null;
  const now = clock.now();
  const eventsQuery = parseEventsQuery({ limit: String(recentEventsShown) });
  const performanceQuery = parsePerformanceQuery({ interval: "last_30_days", limit: "10" }, now);
  const analyticsQuery = parseAnalyticsQuery({ group_by: request.groupBy, interval: "last_30_days" }, now);
  if (!eventsQuery.ok || !performanceQuery.ok || !analyticsQuery.ok) {
    throw new Error("the page's own queries are invalid");
  }
  const actor = { userId, programId, now };
  const [readiness, stored, links, partners, events, performance, analytics] = await Promise.all([
    readReadiness(db, { programId }, clock),
    readProgramSettings(db, programId),
    listReferralLinks(db, actor),
    readActivePartners(db, programId),
    readRecentEvents(db, programId, eventsQuery.query),
    readPerformance(db, programId, performanceQuery.query),
    readProgramAnalytics(db, programId, analyticsQuery.query),
  ]);
  if (!readiness.verdict || !stored || !links.ok) return null;
  return {
    role: membership.role,
    readiness: readiness.verdict,
    settings: settingsView(stored, clock.now()),
    links: links.links,
    partners,
    events,
    performance,
    analytics,
  };
}
