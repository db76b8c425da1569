import { build } from "esbuild";

/**
 * Bundles a browser script the way both of ours ship (the tracker, `tracker/build.ts`, and the dashboard's
 * page script, `dashboard/build.ts`): one minified IIFE for es2020, ASCII only, no legal comments, in memory.
 * Returns the script's text, trimmed.
 */
export async function bundleBrowserScript(entry: string, what: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: "iife",
    target: "es2020",
    platform: "browser",
    charset: "ascii",
    legalComments: "none",
    write: false,
    logLevel: "silent",
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error(`${what} build produced no output`);
  return output.text.trim();
}

/** `text` escaped to stand inside a template literal of a generated module (which the formatter leaves alone). */
export function templateLiteralText(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/`/g, "\\`").replace(/\$\{/g, "\\${");
}
