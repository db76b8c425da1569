import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectConfigFile, workingFolder } from "../../cli/project-config.ts";

// `npm run cli -- <command>` runs the tool from the repository's root: the project file (`init` writes the
// program's key there) must still be the one of the folder the person called npm from.

const repository = resolve(import.meta.dirname, "../..");
const ownPackage = join(repository, "package.json");

describe("workingFolder", () => {
  const cases: Array<[string, NodeJS.ProcessEnv, string]> = [
    [
      "this repository's cli script: the folder npm was called from",
      { npm_lifecycle_event: "cli", npm_package_json: ownPackage, INIT_CWD: "/home/p/shop" },
      "/home/p/shop",
    ],
    ["run directly (no npm): the process's folder", {}, "/repo"],
    [
      "another package's script of the same name: the process's folder",
      {
        npm_lifecycle_event: "cli",
        npm_package_json: "/home/p/shop/package.json",
        INIT_CWD: "/home/p/shop/sub",
      },
      "/repo",
    ],
    [
      "another script of this repository: the process's folder",
      { npm_lifecycle_event: "test", npm_package_json: ownPackage, INIT_CWD: "/x" },
      "/repo",
    ],
  ];
  it.each(cases)("%s", (_name, env, expected) => {
    expect(workingFolder(env, "/repo")).toBe(expected);
  });
});

describe("npm run cli from another folder", () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), "cli-folder-"));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  function status() {
    const run = spawnSync("npm", ["--prefix", repository, "run", "--silent", "cli", "--", "status"], {
      cwd: folder,
      encoding: "utf8",
      // A closed port: with the key found, the tool tries the service and cannot reach it.
      env: {
        ...process.env,
        AFFILIATE_TRACKING_BASE_URL: "http://127.0.0.1:9",
        AFFILIATE_TRACKING_API_KEY: "",
      },
      timeout: 60_000,
    });
    return `${run.stdout}${run.stderr}`;
  }

  it("without a project file there: no key", () => {
    expect(status()).toContain("No API key");
  });

  it("with the project file there: its key is used", async () => {
    await writeFile(
      join(folder, projectConfigFile),
      JSON.stringify({ base_url: "http://127.0.0.1:9", program_id: 1, api_key: "sk_live_x" }),
    );
    const output = status();
    expect(output).not.toContain("No API key");
    expect(output).toContain("Cannot reach http://127.0.0.1:9");
  });
});
