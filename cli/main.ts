import { Command, Option } from "commander";
import { defaultBaseUrl } from "./api-client.ts";
import { logout, whoami } from "./commands/account.ts";
import { type InitFlags, init } from "./commands/init.ts";
import { login } from "./commands/login.ts";
import { programs } from "./commands/programs.ts";
import { status } from "./commands/status.ts";
import { testEvent } from "./commands/test-event.ts";
import { exitCodes } from "./exit-codes.ts";
import { fail, type GlobalOptions } from "./output.ts";
import { readProjectConfig } from "./project-config.ts";

const program = new Command("affiliate-tracking-service")
  .description("Set up and check affiliate tracking from your terminal.")
  .addOption(
    new Option("--base-url <url>", "the service's address")
      .env("AFFILIATE_TRACKING_BASE_URL")
      .default(defaultBaseUrl, `${defaultBaseUrl}, the local stack`),
  )
  .option("--json", "print one JSON document (for scripts and agents)")
  .showHelpAfterError()
  .exitOverride((error) => {
    // Usage errors (unknown command, missing argument) exit 2; --help and --version exit 0.
    process.exit(error.exitCode === 0 ? exitCodes.ok : exitCodes.usage);
  });

/**
 * The service's address: `--base-url`, then AFFILIATE_TRACKING_BASE_URL, then the `base_url` that `init` wrote
 * into the folder's project file (so `status` and `test` talk to the service that made the program), then the
 * local stack's.
 */
async function serviceAddress(given: string): Promise<string> {
  if (program.getOptionValueSource("baseUrl") !== "default") return given;
  const fromProject = (await readProjectConfig())?.base_url;
  return typeof fromProject === "string" && /^https?:\/\//.test(fromProject) ? fromProject : given;
}

/** Runs a command with the global options merged in; every failure becomes a message and an exit code. */
function run<T extends object>(action: (options: GlobalOptions & T) => Promise<void>) {
  return async (local: T) => {
    const globals = program.opts<{ baseUrl: string; json?: boolean }>();
    const options = {
      ...local,
      baseUrl: (await serviceAddress(globals.baseUrl)).replace(/\/+$/, ""),
      givenBaseUrl: globals.baseUrl.replace(/\/+$/, ""),
      json: globals.json,
    } as GlobalOptions & T;
    try {
      await action(options);
    } catch (error) {
      fail(options, error);
    }
  };
}

program
  .command("login")
  .description("log in through your browser (prints the URL and a code when it cannot open one)")
  .option("--no-browser", "do not try to open a browser")
  .action(run<{ browser: boolean }>(login));
program.command("logout").description("revoke and forget the stored login").action(run(logout));
program.command("whoami").description("show who is logged in").action(run(whoami));
program
  .command("init")
  .description("create a program and write its id and API key to .affiliate-tracking.json")
  .option("--name <name>", "program name")
  .option("--domain <domain>", "your site's domain")
  .option("--commission-type <type>", "percent, fixed, recurring_percent or recurring_fixed")
  .option("--commission-rate <number>", "percentage (percent types) or amount (fixed types)")
  .option("--duration-months <n>", "recurring types: months paid, 0 = lifetime")
  .option("--cookie-duration <days>", "attribution window in days, 1 to 365")
  .option("--no-interactive", "never prompt: fail on anything missing")
  .option("--force", "replace an existing .affiliate-tracking.json (the key it holds is not shown again)")
  .action(run<InitFlags>(init));
program.command("programs").description("list your programs").action(run(programs));
program
  .command("status")
  .description("the program's integration status")
  .option(
    "--api-key <key>",
    "program API key (default: AFFILIATE_TRACKING_API_KEY, then .affiliate-tracking.json)",
  )
  .action(run<{ apiKey?: string }>(status));
program
  .command("test")
  .description("record a test click, lead or sale, or run the synthetic chain")
  .argument("<kind>", "click, lead, sale or chain")
  .option(
    "--api-key <key>",
    "program API key (default: AFFILIATE_TRACKING_API_KEY, then .affiliate-tracking.json)",
  )
  .action((kind: string, local: { apiKey?: string }) =>
    run<{ apiKey?: string }>((options) => testEvent(kind, options))(local),
  );

await program.parseAsync(process.argv);
