import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "./cli-run.ts";

// `login` polls until the person has signed in. A poll that fails for a reason that may pass (a 5xx while the
// service restarts, a 429) must not end the login; a refusal must. The service cannot be made to fail on
// demand, so a stand-in answers the two login routes with the service's own envelopes, failures injected.

/** An answer of the stand-in: a status and body, or `drop` (the connection closed unanswered: unreachable). */
type Answer = [status: number, body: unknown] | "drop";

let server: Server;
let baseUrl: string;
let folder: string;
let polls: Answer[];
let polled: number;

const started = {
  data: {
    state: "st_1",
    user_code: "ABCD-EFGH",
    verification_url: "http://127.0.0.1/login",
    poll_interval_seconds: 0.05,
    expires_at: new Date(Date.now() + 300_000).toISOString(),
  },
};
const complete: Answer = [
  200,
  {
    data: {
      status: "complete",
      token: "lt_secret_token_value",
      email: "dev@shop.example",
      expires_at: "2027-01-01T00:00:00.000Z",
    },
  },
];
const pending: Answer = [200, { data: { status: "pending" } }];
const failed = (status: number, name: string, message: string): Answer => [
  status,
  { data: null, error: { status, name, message, details: {} } },
];

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "cli-login-"));
  polled = 0;
  server = createServer((request, response) => {
    const answer: Answer = request.url?.startsWith("/api/v1/cli/auth/start")
      ? [200, started]
      : (polls[polled++] ?? pending);
    if (answer === "drop") {
      request.socket.destroy();
      return;
    }
    const [status, body] = answer;
    response.writeHead(status, { "Content-Type": "application/json" });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await new Promise((closed) => server.close(closed));
  await rm(folder, { recursive: true, force: true });
});

function login(): Promise<{ code: number | null; output: string }> {
  return runCli(["login", "--no-browser", "--json"], {
    cwd: folder,
    env: { AFFILIATE_TRACKING_BASE_URL: baseUrl, AFFILIATE_TRACKING_CONFIG_DIR: folder },
  });
}

describe("login's polling", () => {
  it("goes on past an unanswered poll, a 503 and a 429, and stores the login", async () => {
    polls = [
      pending,
      "drop",
      failed(503, "ServiceUnavailableError", "Service restarting"),
      [
        429,
        {
          error: { status: 429, code: "rate_limited", message: "Too many requests", retry_after_seconds: 1 },
        },
      ],
      complete,
    ];
    const run = await login();
    expect(run.code).toBe(0);
    expect(polled).toBe(5);
    expect(run.output).toContain('"ok": true');
    expect(run.output).toContain('"email": "dev@shop.example"');
  });

  it("stops at a refusal (the session already used) with its message and exit code 4", async () => {
    polls = [pending, failed(400, "BadRequestError", "Session already consumed"), complete];
    const run = await login();
    expect(run.code).toBe(4);
    expect(polled).toBe(2);
    expect(run.output).toContain("Session already consumed");
  });
});
