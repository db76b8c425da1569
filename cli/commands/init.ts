import { cancel, isCancel, select, text } from "@clack/prompts";
import { callApi } from "../api-client.ts";
import { masked } from "../credentials-store.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { emit, type GlobalOptions } from "../output.ts";
import {
  projectConfigExists,
  projectConfigFile,
  projectConfigPath,
  readProjectConfig,
  writeProjectConfig,
} from "../project-config.ts";
import { requireLogin } from "../session.ts";
import { integrationSnippets } from "../snippets.ts";

export interface InitFlags {
  name?: string;
  domain?: string;
  commissionType?: string;
  commissionRate?: string;
  durationMonths?: string;
  cookieDuration?: string;
  interactive: boolean;
  /** Replace an existing project config file (its program keeps running; only this folder forgets its key). */
  force?: boolean;
}

const commissionTypes = ["percent", "fixed", "recurring_percent", "recurring_fixed"] as const;

interface Created {
  program: { id: number; name: string; domain: string };
  api_key: string;
}

async function ask(message: string, placeholder?: string): Promise<string> {
  const answer = await text({ message, placeholder, validate: (v) => (v?.trim() ? undefined : "Required") });
  if (isCancel(answer)) {
    cancel("Cancelled.");
    throw new CliError("Cancelled.", exitCodes.usage);
  }
  return answer.trim();
}

/** A decimal number as a person writes one: `20`, `7.5`, `-1`, `1e3`; not `0x10`, `Infinity` or ` `. */
const decimalNumber = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A number flag as the person typed it; the server's rules (spec section 7) judge its value. Only decimal
 * notation: `Number` also reads `0x10` as 16 (a 16-day window from a typo) and `Infinity`, which JSON sends as
 * `null` (answered as a missing field).
 */
export function numberOf(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value.trim());
  if (!decimalNumber.test(value.trim()) || !Number.isFinite(parsed))
    throw new CliError(`--${flag} must be a number (got "${value}")`, exitCodes.usage);
  return parsed;
}

/**
 * Creates a program in the logged-in person's workspace: every field from a flag or, interactively, from a
 * prompt; with `--no-interactive` anything missing is an error (exit 2). Writes the program id and the
 * API key (shown this once) to the project config file and prints the snippets to add.
 */
export async function init(options: GlobalOptions & InitFlags): Promise<void> {
  if (!options.force && (await projectConfigExists())) {
    // The file holds the only copy the tool has of that program's key (shown once): never lose it unasked,
    // even when it cannot be parsed.
    const existing = await readProjectConfig();
    const holds =
      existing?.program_id !== undefined
        ? `already holds the key of program ${existing.program_id}`
        : "already exists and may hold a program's key";
    throw new CliError(
      `${projectConfigPath()} ${holds}. Run init in another folder, ` +
        "or pass --force to replace the file (that program keeps running; a workspace owner can regenerate its key in the dashboard).",
      exitCodes.usage,
    );
  }
  const login = await requireLogin(options.baseUrl);
  const missing = (["name", "domain", "commissionType", "commissionRate"] as const).filter(
    (k) => options[k] === undefined,
  );
  if (missing.length > 0 && (!options.interactive || options.json || !process.stdin.isTTY)) {
    const flags = missing.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
    throw new CliError(
      `Missing ${flags.join(", ")} (required with --no-interactive, --json or without a terminal)`,
      exitCodes.usage,
    );
  }
  const name = options.name ?? (await ask("Program name", "Acme referrals"));
  const domain = options.domain ?? (await ask("Your site's domain", "acme.example"));
  let commissionType = options.commissionType;
  if (commissionType === undefined) {
    const chosen = await select({
      message: "Commission type",
      options: commissionTypes.map((value) => ({ value, label: value })),
    });
    if (isCancel(chosen)) throw new CliError("Cancelled.", exitCodes.usage);
    commissionType = chosen;
  }
  const rate = numberOf(
    "commission-rate",
    options.commissionRate ?? (await ask("Commission rate (percent, or amount for fixed types)", "20")),
  );
  const body = {
    name,
    domain,
    commission_type: commissionType,
    commission_rate: rate,
    ...(options.durationMonths !== undefined
      ? { duration_months: numberOf("duration-months", options.durationMonths) }
      : {}),
    ...(options.cookieDuration !== undefined
      ? { cookie_duration: numberOf("cookie-duration", options.cookieDuration) }
      : {}),
  };
  const { data } = await callApi<Created>(options.baseUrl, "POST", "/api/v1/cli/init", {
    token: login.token,
    body,
  });
  let gitignored: boolean;
  try {
    gitignored = await writeProjectConfig(
      { base_url: options.baseUrl, program_id: data.program.id, api_key: data.api_key },
      { replace: options.force === true },
    );
  } catch (error) {
    // The program exists and its key is shown only this once: print it rather than lose it. Not exit 1 (a
    // server failure, "retry"): running init again would create another program.
    throw new CliError(
      `Created program ${data.program.id} "${data.program.name}", but could not write ${projectConfigPath()} ` +
        `(${(error as Error).message}). Its API key, shown only this once: ${data.api_key} ` +
        "Keep it in your secrets; do not run init again for this program.",
      exitCodes.incomplete,
      { code: "project_file_not_written" },
    );
  }
  emit(
    options,
    {
      ok: true,
      program: data.program,
      api_key: masked(data.api_key),
      config_file: projectConfigPath(),
      gitignore_updated: gitignored,
    },
    () => {
      process.stdout.write(
        `Created program ${data.program.id} "${data.program.name}" (${data.program.domain}).\n`,
      );
      process.stdout.write(
        `Its API key ${masked(data.api_key)} and the program id are in ${projectConfigPath()}${gitignored ? " (added to .gitignore)" : ""}.\n`,
      );
      process.stdout.write(
        `Keep ${projectConfigFile} out of version control; the key is shown only this once.\n\n`,
      );
      process.stdout.write(`${integrationSnippets(options.baseUrl, data.program.id)}\n`);
    },
  );
}
