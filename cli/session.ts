import { loadLogin, type StoredLogin } from "./credentials-store.ts";
import { CliError, exitCodes } from "./exit-codes.ts";
import type { GlobalOptions } from "./output.ts";
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

/**
 * The program key for `status` and `test` and where to send it: `--api-key`, then AFFILIATE_TRACKING_API_KEY,
 * then the project config. A key the person gave goes to the address they gave (or the default), never to the
 * one a project file names: the file comes with the folder (a cloned repository can hold one), so its address
 * is trusted with its own key only, whichever way that key was given (init suggests exporting it).
 */
export async function resolveApiKey(
  options: GlobalOptions & { apiKey?: string },
): Promise<{ key: string; baseUrl: string }> {
  // An empty variable (`AFFILIATE_TRACKING_API_KEY=`) counts as unset, as shells and CI files often leave it.
  const given = options.apiKey || process.env.AFFILIATE_TRACKING_API_KEY;
  const key = (await readProjectConfig())?.api_key;
  if (given) return { key: given, baseUrl: given === key ? options.baseUrl : options.givenBaseUrl };
  if (!key) {
    throw new CliError(
      `No API key: run \`${selfCommand()} init\` here, or pass --api-key (or set AFFILIATE_TRACKING_API_KEY).`,
      exitCodes.usage,
    );
  }
  return { key, baseUrl: options.baseUrl };
}
