import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { projectConfigFile } from "../../cli/project-config.ts";
import { runCli } from "./cli-run.ts";

// `init` and the project file that holds the only copy of a program's API key (shown once). The service is a
// stub answering `POST /api/v1/cli/init`, so each case can say what the folder looks like when it answers.

const API_KEY = "sk_live_stubbedKeyShownOnlyOnce0123";

let server: Server;
let baseUrl: string;
let folder: string;
let initCalls: number;
/** The Authorization headers the stub saw on other paths (`status`, `test`). */
let keysSeen: string[];
/** Runs in the stub before it answers a created program. */
let beforeAnswer: () => Promise<void>;

function tool(...args: string[]): Promise<{ code: number | null; output: string }> {
  return toolWith({ AFFILIATE_TRACKING_BASE_URL: baseUrl }, ...args);
}

function toolWith(
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<{ code: number | null; output: string }> {
  return runCli(args, {
    cwd: folder,
    env: {
      AFFILIATE_TRACKING_BASE_URL: undefined,
      AFFILIATE_TRACKING_CONFIG_DIR: join(folder, "config"),
      AFFILIATE_TRACKING_API_KEY: "",
      ...env,
    },
  });
}

const initFlags = [
  "init",
  "--no-interactive",
  "--name",
  "Acme",
  "--domain",
  "acme.example",
  "--commission-type",
  "percent",
  "--commission-rate",
  "20",
];

describe("init and an existing or unwritable project file", () => {
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.method !== "POST" || request.url !== "/api/v1/cli/init") {
        keysSeen.push(request.headers.authorization ?? "");
        response.writeHead(404).end();
        return;
      }
      initCalls++;
      void beforeAnswer().then(() => {
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(
          JSON.stringify({
            success: true,
            data: { program: { id: 42, name: "Acme", domain: "acme.example" }, api_key: API_KEY },
          }),
        );
      });
    });
    await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((closed) => server.close(closed));
  });

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), "cli-project-file-"));
    initCalls = 0;
    keysSeen = [];
    beforeAnswer = async () => {};
    const login = { token: "atl_stub", email: "p@brand.example", expires_at: "2099-01-01T00:00:00.000Z" };
    await mkdir(join(folder, "config"));
    await writeFile(join(folder, "config", "credentials.json"), JSON.stringify({ [baseUrl]: login }));
  });
  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  // A file the tool cannot parse may still be the person's only copy of a key (a hand edit left a trailing
  // comma): it is refused like a readable one, not taken as absent and overwritten.
  const unreadable: Array<[string, string]> = [
    ["not JSON (a trailing comma)", '{\n  "program_id": 7,\n  "api_key": "sk_live_keepme",\n}\n'],
    ["empty", ""],
    ["JSON null", "null"],
  ];
  it.each(unreadable)(
    "a project file that is %s is kept, nothing is created",
    async (_name, content) => {
      await writeFile(join(folder, projectConfigFile), content);
      const run = await tool(...initFlags);
      expect(run.code).toBe(2);
      expect(run.output).toContain("pass --force to replace the file");
      expect(await readFile(join(folder, projectConfigFile), "utf8")).toBe(content);
      expect(initCalls).toBe(0);
    },
    30_000,
  );

  it("--force replaces the file, readable by its owner only whatever its mode was", async () => {
    await writeFile(join(folder, projectConfigFile), '{"program_id": 7, "api_key": "sk_live_old"}\n', {
      mode: 0o644,
    });
    const run = await tool(...initFlags, "--force");
    expect(run.code).toBe(0);
    expect(JSON.parse(await readFile(join(folder, projectConfigFile), "utf8"))).toMatchObject({
      program_id: 42,
      api_key: API_KEY,
    });
    expect((await stat(join(folder, projectConfigFile))).mode & 0o777).toBe(0o600);
  }, 30_000);

  it("a project file that is a dangling link is refused before anything is created", async () => {
    await symlink(join(folder, "missing", projectConfigFile), join(folder, projectConfigFile));
    const run = await tool(...initFlags);
    expect(run.code).toBe(2);
    expect(run.output).toContain("pass --force to replace the file");
    expect(initCalls).toBe(0);
  }, 30_000);

  it("the file cannot be written once the program exists: the key is shown, not lost", async () => {
    // Something takes the file's name while the service creates the program.
    beforeAnswer = () => mkdir(join(folder, projectConfigFile));
    const run = await tool(...initFlags);
    expect(initCalls).toBe(1);
    // Not 1 ("retry with backoff"): running init again would create another program.
    expect(run.code).toBe(6);
    expect(run.output).toContain("Created program 42");
    expect(run.output).toContain(API_KEY);
    expect(run.output).toContain("do not run init again");
  }, 30_000);

  it("another init wrote the file while this one created its program: that file is kept, this key is shown", async () => {
    const theirs = '{"program_id": 41, "api_key": "sk_live_ofTheOtherInit"}\n';
    beforeAnswer = () => writeFile(join(folder, projectConfigFile), theirs);
    const run = await tool("--json", ...initFlags);
    expect(run.code).toBe(6);
    expect(await readFile(join(folder, projectConfigFile), "utf8")).toBe(theirs);
    const answer = JSON.parse(run.output) as { ok: boolean; error: { code: string; message: string } };
    expect(answer.ok).toBe(false);
    expect(answer.error.code).toBe("project_file_not_written");
    expect(answer.error.message).toContain(API_KEY);
  }, 30_000);

  // A project file comes with the folder (a cloned repository can hold one): its address is trusted only for
  // its own key. A key from --api-key or AFFILIATE_TRACKING_API_KEY (the live key the person exported, as
  // init suggests) never goes to an address the folder named.
  const foreignKeys: Array<[string, string[], NodeJS.ProcessEnv]> = [
    ["status, key from the variable", ["status"], { AFFILIATE_TRACKING_API_KEY: "sk_live_fromTheShell" }],
    [
      "test click, key from the variable",
      ["test", "click"],
      { AFFILIATE_TRACKING_API_KEY: "sk_live_fromTheShell" },
    ],
    ["status, key from --api-key", ["status", "--api-key", "sk_live_fromTheShell"], {}],
  ];
  it.each(foreignKeys)(
    "%s: not sent to the project file's address",
    async (_name, args, env) => {
      const project = { base_url: baseUrl, program_id: 1, api_key: "sk_live_ofTheFolder" };
      await writeFile(join(folder, projectConfigFile), JSON.stringify(project));
      // No address given: the default one (the local stack) is asked, or cannot be reached; not the file's.
      const run = await toolWith(env, ...args);
      expect(keysSeen).toEqual([]);
      // It did ask (the default address refused the key, or could not be reached), rather than fail before.
      expect(run.code === 3 || run.output.includes("http://127.0.0.1:8787")).toBe(true);
    },
    30_000,
  );

  it("the project file's own key still goes to the project file's address", async () => {
    const project = { base_url: baseUrl, program_id: 1, api_key: "sk_live_ofTheFolder" };
    await writeFile(join(folder, projectConfigFile), JSON.stringify(project));
    await toolWith({}, "status");
    expect(keysSeen).toEqual(["Bearer sk_live_ofTheFolder"]);
  }, 30_000);

  // init prints `export AFFILIATE_TRACKING_API_KEY="$(node -p 'require("./.affiliate-tracking.json").api_key')"`
  // and then "check it: ... test chain && ... status": the exported key is the file's own, so it goes where the
  // file says (it went to the default address, and status against any other service could not reach it).
  const ownKeyGiven: Array<[string, string[], NodeJS.ProcessEnv]> = [
    [
      "status, the file's key from the variable",
      ["status"],
      { AFFILIATE_TRACKING_API_KEY: "sk_live_ofTheFolder" },
    ],
    ["test click, the file's key from --api-key", ["test", "click", "--api-key", "sk_live_ofTheFolder"], {}],
  ];
  it.each(ownKeyGiven)(
    "%s: sent to the project file's address",
    async (_name, args, env) => {
      const project = { base_url: baseUrl, program_id: 1, api_key: "sk_live_ofTheFolder" };
      await writeFile(join(folder, projectConfigFile), JSON.stringify(project));
      await toolWith(env, ...args);
      expect(keysSeen).toEqual(["Bearer sk_live_ofTheFolder"]);
    },
    30_000,
  );
});
