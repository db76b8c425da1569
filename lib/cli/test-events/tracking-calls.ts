/**
 * How test events reach the tracking endpoints: the same click, lead and sale code a brand's backend reaches,
 * with the program key, so a test event is recorded and counted exactly like one sent by hand. The console
 * worker sends them to the tracking worker through its service binding (`trackingWorkerCalls`, no network
 * hop); tests may pass another.
 */
export interface TrackingCalls {
  post(
    path: "/api/v1/track/click" | "/api/v1/track/lead" | "/api/v1/track/sale",
    body: Record<string, unknown>,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
}

export interface StepReport {
  step: "click" | "lead" | "sale";
  ok: boolean;
  status: number;
  /** The click id, or the stored test event's id. */
  id: string | number | null;
  message: string | null;
}

export function reportOf(
  step: StepReport["step"],
  response: { status: number; body: Record<string, unknown> },
): StepReport {
  const body = response.body;
  const data = (body.data ?? null) as { eventId?: number } | null;
  const error = (body.error ?? null) as { message?: string } | null;
  const id = step === "click" ? ((body.click_id as string | undefined) ?? null) : (data?.eventId ?? null);
  return {
    step,
    ok: response.status === 200,
    status: response.status,
    id,
    message: error?.message ?? (typeof body.message === "string" ? body.message : null),
  };
}
