/**
 * What the dashboard's Webhooks section says about an endpoint and an attempt (pure). Only the server renders
 * them: the page's script redraws the section from a fresh render rather than carrying a copy.
 */

export interface EndpointStateFields {
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
  failing_since: string | null;
}

export interface AttemptFields {
  succeeded: boolean;
  error: string | null;
  delivery_status: string;
}

/** An ISO time to the second, e.g. `2026-11-23 16:00:05 UTC`, or `-` when there is none. */
export function webhookTime(iso: string | null): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : "-";
}

export function endpointStateText(e: EndpointStateFields): string {
  if (e.enabled)
    return e.failing_since ? `Enabled, failing since ${webhookTime(e.failing_since)}` : "Enabled";
  if (e.disabled_reason === "failing") {
    return `Disabled: every attempt failed for three days (${webhookTime(e.disabled_at)}). Fix the receiver, then enable it again.`;
  }
  if (e.disabled_reason === "by_user") return `Disabled by a person (${webhookTime(e.disabled_at)})`;
  return "Disabled";
}

export function toggleLabel(enabled: boolean): string {
  return enabled ? "Disable" : "Enable";
}

/** The secret is never shown again after the answer that created it: only that one exists. */
export function maskedSecretText(previousSecretExpiresAt: string | null, now: Date): string {
  const overlap =
    previousSecretExpiresAt && new Date(previousSecretExpiresAt) > now
      ? `; the previous secret signs too until ${webhookTime(previousSecretExpiresAt)}`
      : "";
  return `whsec_•••••••• (shown once, when created or rotated${overlap})`;
}

export function attemptResultText(a: AttemptFields): string {
  if (a.succeeded) return "Delivered";
  const why = a.error ?? "failed";
  if (a.delivery_status === "pending") return `Failed (${why}), will retry`;
  if (a.delivery_status === "failed") return `Failed (${why}), gave up`;
  if (a.delivery_status === "cancelled") return `Failed (${why}), cancelled`;
  return `Failed (${why})`;
}
