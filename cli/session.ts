import { loadLogin, type StoredLogin } from "./credentials-store.ts";
import { CliError, exitCodes } from "./exit-codes.ts";
import { readProjectConfig, selfCommand } from "./project-config.ts";

/** The stored login for this service, or a usage error telling the person to log in. */
export async function requireLogin(baseUrl: string): Promise<StoredLogin> {
  const login = await loadLogin(baseUrl);
  if (!login) {
    throw new CliError(
      `Not logged in to ${baseUrl}. Run \`${selfCommand()} login\` first.`,
      exitCodes.unauthenticated,
    );
  }
  return login;
}

/** The program key for `status` and `test`: `--api-key`, then AFFILIATE_TRACKING_API_KEY, then the project config. */
export async function resolveApiKey(explicit: string | undefined): Promise<string> {
  // An empty variable (`AFFILIATE_TRACKING_API_KEY=`) counts as unset, as shells and CI files often leave it.
  const key = explicit || process.env.AFFILIATE_TRACKING_API_KEY || (await readProjectConfig())?.api_key;
  if (!key) {
    throw new CliError(
      `No API key: run \`${selfCommand()} init\` here, or pass --api-key (or set AFFILIATE_TRACKING_API_KEY).`,
      exitCodes.usage,
    );
  }
  return key;
}
