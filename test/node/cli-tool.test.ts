import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../dev/local-stack.ts";
import { signInAtProvider } from "../workers/oidc-sign-in.ts";

// The command-line tool driven as a person drives it: spawned processes of its `bin` against the local stack
// of `npm run dev` (started in-process here), the browser step of `login` automated with fetch through the
// service's login link and the local provider's own sign-in page.

const BIN = resolve(import.meta.dirname, "../../cli/bin.js");

let dataDir: string;
let workDir: string;
let stack: LocalStack | undefined;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(args: string[]): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: workDir,
    env: {
      ...process.env,
      AFFILIATE_TRACKING_BASE_URL: stack!.baseUrl,
      AFFILIATE_TRACKING_CONFIG_DIR: join(workDir, "config"),
      AFFILIATE_TRACKING_API_KEY: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const done = new Promise<Run>((resolveRun) => {
    child.on("close", (code) => resolveRun({ code, stdout, stderr }));
  });
  return { child, done };
}

const tool = (...args: string[]) => start(args).done;

/** The JSON document a `--json` run prints on stdout. */
// biome-ignore lint/suspicious/noExplicitAny: parsed output is read field by field in assertions.
const json = (run: Run): any => JSON.parse(run.stdout);

/** Cookie value (name=value) from a response's Set-Cookie lines. */
function cookie(response: Response, name: string): string {
  // Node's fetch has getSetCookie; the workers' type definitions (this project's lib) do not declare it.
  const headers = response.headers as Headers & { getSetCookie(): string[] };
  for (const line of headers.getSetCookie()) {
    const [pair] = line.split(";");
    if (pair?.startsWith(`${name}=`)) return pair;
  }
  throw new Error(`no ${name} cookie (status ${response.status})`);
}

/**
 * What a browser does with the login link: the link, the sign-in start, the provider's page, the callback,
 * then the approval of the code the page shows.
 */
async function signInThroughLink(verificationUrl: string, email: string): Promise<string> {
  const link = await fetch(verificationUrl, { redirect: "manual" });
  expect(link.status).toBe(302);
  const loginCookie = cookie(link, "__Host-affiliate_cli_login");
  const signIn = await fetch(new URL(link.headers.get("Location") ?? "", verificationUrl), {
    redirect: "manual",
    headers: { Cookie: loginCookie },
  });
  const stateCookie = cookie(signIn, "__Host-affiliate_sign_in_state");
  const back = await signInAtProvider(signIn.headers.get("Location") ?? "", { email, verified: true });
  const page = await fetch(back, {
    redirect: "manual",
    headers: { Cookie: `${stateCookie}; ${loginCookie}` },
  });
  expect(page.status).toBe(200);
  const approval = await page.text();
  expect(approval).toContain("Approve the command-line sign-in?");
  // The form sends back the code the page showed.
  const shownCode = /name="code" value="([A-Z-]+)"/.exec(approval)?.[1] ?? "";
  const approved = await fetch(new URL("/cli/login/approve", verificationUrl), {
    method: "POST",
    redirect: "manual",
    headers: {
      Cookie: `${cookie(page, "__Host-affiliate_session")}; ${loginCookie}`,
      Origin: new URL(verificationUrl).origin,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ code: shownCode }).toString(),
  });
  expect(approved.status).toBe(200);
  return approved.text();
}

async function waitFor(read: () => string, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = read().match(pattern);
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}: ${read()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the command-line tool against the local stack", () => {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "cli-tool-stack-"));
    workDir = await mkdtemp(join(tmpdir(), "cli-tool-project-"));
    stack = await startLocalStack({ dataDir, port: 0, logLevel: "error" });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    for (const dir of [dataDir, workDir]) if (dir) await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it("login, whoami, init --no-interactive, programs, status, test chain (eleventh refused), logout", async () => {
    const email = `tool-user-${Date.now()}@brand.example`;

    // login: the link goes to stderr in --json mode; the test plays the browser.
    let stderr = "";
    const login = start(["--json", "login", "--no-browser"]);
    login.child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    const [linkLine] = await waitFor(() => stderr, /\{[^\n]*"verification_url"[^\n]*\}/);
    const { verification_url, user_code } = JSON.parse(linkLine) as {
      verification_url: string;
      user_code: string;
    };
    expect(await signInThroughLink(verification_url, email)).toContain(user_code);
    const loggedIn = await login.done;
    expect(loggedIn.code).toBe(0);
    expect(json(loggedIn)).toMatchObject({ ok: true, email });
    // The token is stored 0600 and printed only masked.
    const credentials = join(workDir, "config", "credentials.json");
    expect((await stat(credentials)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(credentials, "utf8"))[stack!.baseUrl] as { token: string };
    expect(stored.token).toMatch(/^atl_/);
    expect(loggedIn.stdout).not.toContain(stored.token);

    expect(json(await tool("--json", "whoami"))).toMatchObject({ email });

    // init without prompts: a missing field fails with the usage exit code, all fields create the program.
    const missing = await tool("--json", "init", "--no-interactive", "--name", "Acme");
    expect(missing.code).toBe(2);
    const initFlags = ["--no-interactive", "--domain", "acme.example", "--commission-type", "percent"];
    const created = await tool(
      "--json",
      "init",
      ...initFlags,
      "--name",
      "Acme",
      "--commission-rate",
      "20",
      "--cookie-duration",
      "30",
    );
    expect(created.code).toBe(0);
    const program = json(created);
    expect(program).toMatchObject({ ok: true, program: { name: "Acme", domain: "acme.example" } });
    const config = JSON.parse(await readFile(join(workDir, ".affiliate-tracking.json"), "utf8"));
    expect(config).toMatchObject({ program_id: program.program.id });
    expect(config.api_key).toMatch(/^sk_live_/);

    // A second init in the same folder would lose the first program's key (shown once): refused, nothing made.
    const again = await tool("--json", "init", ...initFlags, "--name", "Acme 2", "--commission-rate", "20");
    expect(again.code).toBe(2);
    expect(again.stdout + again.stderr).toContain("pass --force to replace the file");
    expect(JSON.parse(await readFile(join(workDir, ".affiliate-tracking.json"), "utf8"))).toEqual(config);

    const listed = json(await tool("--json", "programs"));
    expect(listed.programs.map((p: { id: number }) => p.id)).toEqual([program.program.id]);

    // status and test read the key from the project file.
    expect(json(await tool("--json", "status"))).toMatchObject({ verified: false });
    const chain = await tool("--json", "test", "chain");
    expect(chain.code).toBe(0);
    const steps = json(chain).steps as { step: string; ok: boolean }[];
    expect(steps.map((s) => [s.step, s.ok])).toEqual([
      ["click", true],
      ["lead", true],
      ["sale", true],
    ]);
    expect(json(await tool("--json", "status"))).toMatchObject({ verified: true });

    // Nine more chains through the API use up the hour's ten; the tool's eleventh is refused (exit 5).
    for (let i = 0; i < 9; i++) {
      const response = await fetch(`${stack!.baseUrl}/api/v1/cli/test-event`, {
        method: "POST",
        headers: { Authorization: `Bearer ${config.api_key}`, "Content-Type": "application/json" },
        body: JSON.stringify({ type: "chain" }),
      });
      expect(response.status).toBe(200);
    }
    const eleventh = await tool("--json", "test", "chain");
    expect(eleventh.code).toBe(5);
    expect(json(eleventh)).toMatchObject({
      ok: false,
      error: { status: 429, message: "Too many synthetic chains (max 10/program/hour)." },
    });

    // The key marked for rotation: the service's warning reaches the person (stderr) and the --json document.
    const keyHash = createHash("sha256").update(config.api_key).digest("hex");
    await stack!.sql.query(
      `update program_api_keys set rotation_marked_at = now(), rotate_by = now() + interval '7 days'
       where key_hash = $1`,
      [keyHash],
    );
    const human = await tool("status");
    expect(human.code).toBe(0);
    expect(human.stderr).toMatch(/^Warning: .+ Rotate by \d{4}-\d\d-\d\dT.+\nHint: .+\nSee .+/m);
    expect(human.stdout).not.toContain("Warning");
    const withWarnings = json(await tool("--json", "status"));
    expect(withWarnings.warnings).toEqual([
      expect.objectContaining({ code: "api_key_rotation_required", rotate_by: expect.any(String) }),
    ]);
    const testEvent = await tool("test", "click");
    expect(testEvent.stderr).toContain("Warning: ");

    expect((await tool("logout")).code).toBe(0);
    const after = await tool("--json", "programs");
    expect(after.code).toBe(3);
  }, 120_000);
});
