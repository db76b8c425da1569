import { spawn } from "node:child_process";
import { resolve } from "node:path";

/** The command-line tool as a person runs it (`cli/bin.js`, a process of its own). */
export const CLI_BIN = resolve(import.meta.dirname, "../../cli/bin.js");

/** Runs the tool to its end in `cwd` with `env` (over this process's), its stdout and stderr as one text. */
export function runCli(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  return new Promise((done) => child.on("close", (code) => done({ code, output })));
}
