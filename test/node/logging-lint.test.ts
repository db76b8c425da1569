import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Issue 9 defect 7, as a lint: the workers' code (`lib/`, `functions/`) logs only through `lib/log.ts`,
 * which writes codes and ids, never an error's message (it can quote SQL parameters) or a payload. The
 * local-stack tools (`dev/`, `bench/`, `tracker/`) print to a terminal and are not checked.
 */
async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name))
    .filter((path) => !path.includes(`${join("functions", "api", "generated")}`));
}

async function offending(pattern: RegExp, allowed: readonly string[] = []): Promise<string[]> {
  const files = [...(await sourceFiles("lib")), ...(await sourceFiles("functions"))];
  const found: string[] = [];
  for (const file of files) {
    if (allowed.includes(file)) continue;
    const lines = (await readFile(file, "utf8")).split("\n");
    lines.forEach((line, index) => {
      if (pattern.test(line)) found.push(`${file}:${index + 1}: ${line.trim()}`);
    });
  }
  return found;
}

describe("logging discipline of the workers' code", () => {
  it("has no raw console call outside lib/log.ts", async () => {
    expect(
      await offending(/\bconsole\.(log|error|warn|info|debug|trace)\b/, [join("lib", "log.ts")]),
    ).toEqual([]);
  });

  it("never logs or stores an error's text (String(error)) nor a payload field", async () => {
    expect(await offending(/String\((error|err|failure|e)\)/)).toEqual([]);
    expect(
      await offending(/\b(log|logger|rootLogger|logged)\.(info|warn|error)\([^)]*\b(payload|rawBody|body)\b/),
    ).toEqual([]);
  });

  it("the checks find what they look for (a line that breaks each rule is reported)", async () => {
    expect(/\bconsole\.(log|error|warn|info|debug|trace)\b/.test("  console.error(JSON.stringify(x));")).toBe(
      true,
    );
    expect(/String\((error|err|failure|e)\)/.test("{ error: String(error) }")).toBe(true);
  });
});
