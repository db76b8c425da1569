import { spinner } from "@clack/prompts";
import open from "open";
import { callApi } from "../api-client.ts";
import { masked, saveLogin } from "../credentials-store.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { emit, type GlobalOptions } from "../output.ts";

interface Started {
  state: string;
  user_code: string;
  verification_url: string;
  poll_interval_seconds: number;
  expires_at: string;
}

type Polled =
  | { status: "pending" | "expired" }
  | { status: "complete"; token: string; expires_at: string; email: string };

/**
 * Device-style login: start a session, open the sign-in page (or print its URL and code when no browser can
 * be opened), poll until signed in or expired, then store the login token (0600) for this service.
 */
export async function login(options: GlobalOptions & { browser: boolean }): Promise<void> {
  const started = (await callApi<Started>(options.baseUrl, "POST", "/api/v1/cli/auth/start")).data;
  const opened = options.browser ? await tryOpen(started.verification_url) : false;
  const notice = `${opened ? "Opened" : "Open"} ${started.verification_url}\nand, once signed in, approve the code ${started.user_code} there if it is the one this terminal shows.`;
  // In --json mode stdout carries only the final document: the URL goes to stderr for a person or a script.
  if (options.json)
    process.stderr.write(
      `${JSON.stringify({ verification_url: started.verification_url, user_code: started.user_code })}\n`,
    );
  else process.stdout.write(`${notice}\n`);

  const spin = options.json ? undefined : spinner();
  spin?.start("Waiting for you to sign in");
  const deadline = new Date(started.expires_at).getTime() + 5_000;
  try {
    for (;;) {
      let polled: Polled | undefined;
      try {
        polled = (
          await callApi<Polled>(
            options.baseUrl,
            "GET",
            `/api/v1/cli/auth/poll?state=${encodeURIComponent(started.state)}`,
          )
        ).data;
      } catch (error) {
        // One failed poll (the service restarting, a 5xx, a 429) does not end the login: the next turn asks
        // again, until the session's own deadline. A refusal (the session unknown or already used) does.
        if (!mayPass(error) || Date.now() > deadline) throw error;
      }
      if (polled?.status === "complete") {
        await saveLogin(options.baseUrl, {
          token: polled.token,
          email: polled.email,
          expires_at: polled.expires_at,
        });
        spin?.stop(`Logged in as ${polled.email}`);
        emit(
          options,
          { ok: true, email: polled.email, token: masked(polled.token), expires_at: polled.expires_at },
          () =>
            process.stdout.write(
              `Login token ${masked(polled.token)} stored; it expires ${polled.expires_at}.\n`,
            ),
        );
        return;
      }
      if (polled?.status === "expired" || Date.now() > deadline) {
        throw new CliError(
          "The login session expired before sign-in. Run `login` again.",
          exitCodes.incomplete,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, started.poll_interval_seconds * 1000));
    }
  } catch (error) {
    spin?.error("Login not completed");
    throw error;
  }
}

/** A failure that may pass by itself: the service unreachable or answering 5xx (exit code 1), or 429. */
function mayPass(error: unknown): boolean {
  return (
    error instanceof CliError &&
    (error.exitCode === exitCodes.failure || error.exitCode === exitCodes.rateLimited)
  );
}

async function tryOpen(url: string): Promise<boolean> {
  try {
    const child = await open(url, { wait: false });
    return await new Promise<boolean>((resolve) => {
      child.once("error", () => resolve(false));
      child.once("spawn", () => resolve(true));
      setTimeout(() => resolve(child.pid !== undefined), 500);
    });
  } catch {
    return false;
  }
}
