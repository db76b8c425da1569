import { appendFile, chmod, lstat, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

/** The file `init` writes in the project folder: the program id and its API key (keep it out of git). */
export const projectConfigFile = ".affiliate-tracking.json";

export interface ProjectConfig {
  base_url: string;
  program_id: number;
  api_key: string;
}

/** This repository's root, and its `package.json`, which npm names (`npm_package_json`) to the scripts it runs. */
const repositoryRoot = resolve(import.meta.dirname, "..");
const repositoryPackage = join(repositoryRoot, "package.json");

/** Whether the tool runs as this repository's `npm run cli` (not as an installed `affiliate-tracking-service`). */
function fromRepositoryScript(env: NodeJS.ProcessEnv): boolean {
  return (
    env.npm_lifecycle_event === "cli" &&
    env.npm_package_json !== undefined &&
    resolve(env.npm_package_json) === repositoryPackage
  );
}

/**
 * The folder the person ran the command in. Inside this repository `npm run cli -- <command>` runs the tool
 * from the repository's root, and npm names the folder it was called from in `INIT_CWD`: that one, so `init`
 * writes the key's file where the person is, and `status` finds it there, not in the repository.
 */
export function workingFolder(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  return fromRepositoryScript(env) && env.INIT_CWD ? env.INIT_CWD : cwd;
}

/**
 * How to run this tool again, for the commands it suggests: the published package's `npx
 * affiliate-tracking-service`, or, when it runs as this repository's npm script, that script (with `--prefix`
 * from another folder), since the package is not on the registry for `npx` to find.
 */
export function selfCommand(env: NodeJS.ProcessEnv = process.env): string {
  if (!fromRepositoryScript(env)) return "npx affiliate-tracking-service";
  const calledFrom = env.INIT_CWD ? resolve(env.INIT_CWD) : repositoryRoot;
  return calledFrom === repositoryRoot ? "npm run cli --" : `npm --prefix ${repositoryRoot} run cli --`;
}

export function projectConfigPath(folder = workingFolder()): string {
  return join(folder, projectConfigFile);
}

export async function readProjectConfig(folder = workingFolder()): Promise<ProjectConfig | undefined> {
  try {
    return JSON.parse(await readFile(projectConfigPath(folder), "utf8")) as ProjectConfig;
  } catch {
    return undefined;
  }
}

/**
 * Whether the folder has a project file at all, whatever it holds: one the tool cannot parse (a hand edit
 * that broke it, an empty file) or a link to nowhere may still stand for a key shown only once.
 */
export async function projectConfigExists(folder = workingFolder()): Promise<boolean> {
  try {
    await lstat(projectConfigPath(folder));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

/**
 * Writes the config with mode 0600 and, when the folder has a `.gitignore` that does not name the file,
 * adds it there, so the key is not committed by accident. Returns whether `.gitignore` was changed.
 * Without `replace` the file must not exist when it is created (`wx`): another `init` in the same folder that
 * wrote first keeps its key, and a link planted at that name is not followed.
 */
export async function writeProjectConfig(
  config: ProjectConfig,
  options: { replace: boolean },
  folder = workingFolder(),
): Promise<boolean> {
  const path = projectConfigPath(folder);
  await writeFile(path, `${JSON.stringify(config, null, 2)}\n`, {
    mode: 0o600,
    flag: options.replace ? "w" : "wx",
  });
  // A replaced file keeps its own mode through the write (the mode applies to a new file only).
  if (options.replace) await chmod(path, 0o600);
  const gitignore = join(folder, ".gitignore");
  let existing: string;
  try {
    existing = await readFile(gitignore, "utf8");
  } catch {
    return false;
  }
  if (existing.split(/\r?\n/).some((line) => line.trim() === projectConfigFile)) return false;
  await appendFile(
    gitignore,
    `${existing.endsWith("\n") || existing === "" ? "" : "\n"}${projectConfigFile}\n`,
  );
  return true;
}
