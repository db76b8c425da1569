import { callApi } from "../api-client.ts";
import { emit, type GlobalOptions, warn } from "../output.ts";
import { resolveApiKey } from "../session.ts";

interface StepStatus {
  live: boolean;
  test: boolean;
  last_at: string | null;
}

interface Status {
  program: { id: number; name: string; domain: string };
  key_mode: "live" | "test";
  verified: boolean;
  steps: Record<"click" | "lead" | "sale", StepStatus>;
  next_step: string | null;
}

const mark = (s: StepStatus) => (s.live ? "live" : s.test ? "test only" : "not yet");

export async function status(options: GlobalOptions & { apiKey?: string }): Promise<void> {
  const { key, baseUrl } = await resolveApiKey(options);
  const { data, warnings } = await callApi<Status>(baseUrl, "GET", "/api/v1/cli/status", {
    token: key,
  });
  warn(options, warnings);
  emit(options, { ok: true, ...data, ...(warnings.length > 0 ? { warnings } : {}) }, () => {
    process.stdout.write(
      `Program ${data.program.id} ${data.program.name} (${data.program.domain}), ${data.key_mode} key\n`,
    );
    for (const name of ["click", "lead", "sale"] as const) {
      const s = data.steps[name];
      process.stdout.write(
        `  ${name.padEnd(5)} ${mark(s).padEnd(9)} ${s.last_at ? `last ${s.last_at}` : ""}\n`,
      );
    }
    process.stdout.write(
      data.verified ? "Integration verified.\n" : `Not verified yet. ${data.next_step ?? ""}\n`,
    );
  });
}
