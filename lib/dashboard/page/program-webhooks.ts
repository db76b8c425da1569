import type { Database } from "../../db/client.ts";
import { rootLogger } from "../../log.ts";
import { type AttemptView, type EndpointView, listEndpoints } from "../../webhooks/manage-endpoints.ts";
import { recentAttemptsByEndpoint } from "../../webhooks/recent-attempts.ts";

/** How many attempts per endpoint the page shows; the attempts route gives the latest 100. */
export const attemptsShownPerEndpoint = 10;

export type ProgramWebhooks =
  /** Webhooks are managed by owners and admins only (as the routes refuse a plain member). */
  | { kind: "not_manager" }
  | { kind: "shown"; readAt: Date; endpoints: { endpoint: EndpointView; attempts: AttemptView[] }[] }
  /** The read failed: the rest of the page is still shown, this section says so. */
  | { kind: "unavailable" };

/**
 * The page's Webhooks section: the program's endpoints (no secret, not even sealed) and each one's latest
 * attempts. Read after the page's own membership check, with the role it found; a failure here is logged and
 * shown in the section alone, since webhooks are an add-on to the page, not what it is for.
 */
export async function readProgramWebhooks(
  db: Database,
  request: { userId: number; programId: number; role: string; now: Date },
): Promise<ProgramWebhooks> {
  if (request.role !== "owner" && request.role !== "admin") return { kind: "not_manager" };
  try {
    const actor = {
      userId: request.userId,
      programId: request.programId,
      now: request.now,
      secretKey: undefined,
      unsealedAllowed: false,
    };
    const [listed, attempts] = await Promise.all([
      listEndpoints(db, actor),
      recentAttemptsByEndpoint(db, request.programId, attemptsShownPerEndpoint),
    ]);
    if (!listed.ok) return { kind: "not_manager" };
    return {
      kind: "shown",
      readAt: request.now,
      endpoints: listed.endpoints.map((endpoint) => ({
        endpoint,
        attempts: attempts.get(endpoint.id) ?? [],
      })),
    };
  } catch (error) {
    rootLogger.error("dashboard webhooks section failed", error);
    return { kind: "unavailable" };
  }
}
