import { callApi } from "../api-client.ts";
import { emit, type GlobalOptions } from "../output.ts";
import { selfCommand } from "../project-config.ts";
import { requireLogin } from "../session.ts";

interface ListedProgram {
  id: number;
  name: string;
  domain: string;
  commission_type: string;
  commission_rate: number;
}

export async function programs(options: GlobalOptions): Promise<void> {
  const login = await requireLogin(options.baseUrl);
  const { data } = await callApi<{ programs: ListedProgram[] }>(
    options.baseUrl,
    "GET",
    "/api/v1/cli/programs",
    { token: login.token },
  );
  emit(options, { ok: true, programs: data.programs }, () => {
    if (data.programs.length === 0) {
      process.stdout.write(`No programs yet. Create one with \`${selfCommand()} init\`.\n`);
      return;
    }
    for (const p of data.programs) {
      process.stdout.write(
        `${String(p.id).padStart(6)}  ${p.name}  (${p.domain}, ${p.commission_type} ${p.commission_rate})\n`,
      );
    }
  });
}
