import { callApi } from "../api-client.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { emit, type GlobalOptions, warn } from "../output.ts";
import { resolveApiKey } from "../session.ts";

interface Step {
  step: "click" | "lead" | "sale";
  ok: boolean;
  status: number;
  id: string | number | null;
  message: string | null;
}

type Answer =
  | { type: "event"; program_id: number; step: Step }
  | { type: "chain"; program_id: number; ok: boolean; steps: Step[] };

const line = (s: Step) =>
  `  ${s.ok ? "ok  " : "FAIL"} ${s.step.padEnd(5)} ${s.id !== null ? `id ${s.id}` : ""}${s.message && !s.ok ? ` (${s.status}: ${s.message})` : ""}\n`;

/** `test click|lead|sale|chain`: a test event, or the synthetic chain with a step-by-step view. */
export async function testEvent(kind: string, options: GlobalOptions & { apiKey?: string }): Promise<void> {
  if (!["click", "lead", "sale", "chain"].includes(kind)) {
    throw new CliError(`Unknown test "${kind}". Use one of: click, lead, sale, chain.`, exitCodes.usage);
  }
  const { key, baseUrl } = await resolveApiKey(options);
  const body = kind === "chain" ? { type: "chain" } : { event_type: kind };
  const { data, warnings } = await callApi<Answer>(baseUrl, "POST", "/api/v1/cli/test-event", {
    token: key,
    body,
  });
  const steps = data.type === "chain" ? data.steps : [data.step];
  const ok = steps.every((s) => s.ok) && (data.type === "event" || steps.length === 3);
  warn(options, warnings);
  emit(options, { ok, ...data, ...(warnings.length > 0 ? { warnings } : {}) }, () => {
    process.stdout.write(
      `${data.type === "chain" ? "Synthetic chain" : `Test ${kind}`} on program ${data.program_id}:\n`,
    );
    for (const s of steps) process.stdout.write(line(s));
  });
  if (!ok) process.exitCode = exitCodes.incomplete;
}
