import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import envPaths from "env-paths";

/** One stored login per service address, in the user's config folder (file mode 0600). */
export interface StoredLogin {
  token: string;
  email: string;
  expires_at: string;
}

type Store = Record<string, StoredLogin>;

/** AFFILIATE_TRACKING_CONFIG_DIR overrides the folder (tests, several identities side by side). */
export function credentialsPath(): string {
  const folder =
    process.env.AFFILIATE_TRACKING_CONFIG_DIR ??
    envPaths("affiliate-tracking-service", { suffix: "" }).config;
  return join(folder, "credentials.json");
}

async function readStore(): Promise<Store> {
  try {
    return JSON.parse(await readFile(credentialsPath(), "utf8")) as Store;
  } catch {
    return {};
  }
}

async function writeStore(store: Store): Promise<void> {
  const path = credentialsPath();
  if (Object.keys(store).length === 0) {
    await rm(path, { force: true });
    return;
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, `${JSON.stringify(store, null, 2)}\n`, { mode: 0o600 });
  // A file that existed before keeps its mode through writeFile: set it every time.
  await chmod(path, 0o600);
}

export async function loadLogin(baseUrl: string): Promise<StoredLogin | undefined> {
  return (await readStore())[baseUrl];
}

export async function saveLogin(baseUrl: string, login: StoredLogin): Promise<void> {
  await writeStore({ ...(await readStore()), [baseUrl]: login });
}

export async function forgetLogin(baseUrl: string): Promise<void> {
  const store = await readStore();
  delete store[baseUrl];
  await writeStore(store);
}

/** Credentials are never printed whole: a prefix and the last four characters. */
export function masked(secret: string): string {
  return secret.length <= 16 ? "****" : `${secret.slice(0, 8)}...${secret.slice(-4)}`;
}
