import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectConfigFile, selfCommand, workingFolder } from "../../cli/project-config.ts";

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

describe("selfCommand: how the tool suggests running itself again", () => {
  const cases: Array<[string, NodeJS.ProcessEnv, string]> = [
    [
      "this repository's cli script, called from another folder",
      { npm_lifecycle_event: "cli", npm_package_json: ownPackage, INIT_CWD: "/home/p/shop" },
      `npm --prefix ${repository} run cli --`,
    ],
    [
      "this repository's cli script, called in the repository",
      { npm_lifecycle_event: "cli", npm_package_json: ownPackage, INIT_CWD: repository },
      "npm run cli --",
    ],
    ["the installed package", {}, "npx affiliate-tracking-service"],
    [
      "another package's script of the same name",
      { npm_lifecycle_event: "cli", npm_package_json: "/home/p/shop/package.json", INIT_CWD: "/home/p/shop" },
      "npx affiliate-tracking-service",
    ],
  ];
  it.each(cases)("%s", (_name, env, expected) => {
    expect(selfCommand(env)).toBe(expected);
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

  function status(baseUrl: string | null = "http://127.0.0.1:9") {
    const env: NodeJS.ProcessEnv = { ...process.env, AFFILIATE_TRACKING_API_KEY: "" };
    // A closed port: with the key found, the tool tries the service and cannot reach it.
    if (baseUrl === null) delete env.AFFILIATE_TRACKING_BASE_URL;
    else env.AFFILIATE_TRACKING_BASE_URL = baseUrl;
    const run = spawnSync("npm", ["--prefix", repository, "run", "--silent", "cli", "--", "status"], {
      cwd: folder,
      encoding: "utf8",
      env,
      timeout: 60_000,
    });
    return `${run.stdout}${run.stderr}`;
  }

  it("without a project file there: no key, and the command to make one as this folder runs it", () => {
    const output = status();
    expect(output).toContain("No API key");
    expect(output).toContain(`run \`npm --prefix ${repository} run cli -- init\` here`);
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

  it("without --base-url or its variable: the service the project file names", async () => {
    await writeFile(
      join(folder, projectConfigFile),
      JSON.stringify({ base_url: "http://127.0.0.1:7", program_id: 1, api_key: "sk_live_x" }),
    );
    expect(status(null)).toContain("Cannot reach http://127.0.0.1:7");
    // The variable (as --base-url) still wins over the file.
    expect(status("http://127.0.0.1:9")).toContain("Cannot reach http://127.0.0.1:9");
  });
});
