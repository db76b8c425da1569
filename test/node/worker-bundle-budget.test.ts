import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The deployed size of every worker, built exactly as `wrangler deploy` builds them
 * (`wrangler deploy --dry-run --minify`), gzipped as `gzip` does (level 6). A worker's size is its cold
 * start: the budget is 150 KB gzipped each (issue 14), met by splitting the HTTP routes over three workers
 * (functions/worker-paths.ts) and by the stand-ins of the wrangler `alias` entries (README "Worker size").
 */
const KB = 1000;
const workers = [
  { name: "events worker", config: "wrangler.stripe-events.toml", budget: 150 * KB },
  // The hot path (click, lead, sale, refund, the tracker's visit and config and script) in a worker of its own.
  { name: "tracking worker", config: "wrangler.tracking.toml", budget: 150 * KB },
  // The dashboard, the sign-in, the command line's endpoints and the docs (152,373 bytes while the ID token
  // was checked with jose; our own WebCrypto check, lib/identity/verify-jws.ts, took it under the budget).
  { name: "console worker", config: "wrangler.console.toml", budget: 150 * KB },
  // The program-key API and the management routes, the crons and the queue consumers: within the budget
  // once the console routes left it (its ceiling went from 208,759 bytes to 179,634 by the cuts of README
  // "Worker size" and the tracking worker's split).
  { name: "API worker", config: "wrangler.toml", budget: 150 * KB },
] as const;

/** The modules the wrangler `alias` entries replace, matched by the exact relative path their importer uses. */
const aliased = [
  "../locales/index.js",
  "./compile.js",
  "./from-json-schema.js",
  "../core/json-schema-processors.js",
  "./json-schema-processors.js",
  "../core/to-json-schema.js",
  "./to-json-schema.js",
  "./json-schema-generator.js",
];

interface Built {
  name: string;
  /** Where wrangler wrote the bundle (`index.js`). */
  outdir: string;
  budget: number;
  minified: number;
  gzipped: number;
  /** The deployed code. */
  code: string;
  /** esbuild's metafile: every input and what it imports. */
  meta: {
    inputs: Record<string, { imports?: { path: string; original?: string }[] }>;
    /** Per output file, the bytes each input left in it (0 when tree-shaken away). */
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
  };
}

const run = promisify(execFile);
let outRoot = "";
let built: Built[] = [];

async function build(worker: (typeof workers)[number]): Promise<Built> {
  const outdir = join(outRoot, worker.config);
  const metafile = join(outdir, "meta.json");
  await run(
    "npx",
    [
      "wrangler",
      "deploy",
      "--dry-run",
      "--minify",
      "-c",
      worker.config,
      "--outdir",
      outdir,
      "--metafile",
      metafile,
    ],
    { env: { ...process.env, WRANGLER_SEND_METRICS: "false" }, maxBuffer: 16 * 1024 * 1024 },
  );
  const code = await readFile(join(outdir, "index.js"));
  return {
    name: worker.name,
    outdir,
    budget: worker.budget,
    minified: code.length,
    gzipped: gzipSync(code).length,
    code: code.toString("utf8"),
    meta: JSON.parse(await readFile(metafile, "utf8")),
  };
}

describe("worker bundle budget", () => {
  beforeAll(async () => {
    outRoot = await mkdtemp(join(tmpdir(), "worker-bundles-"));
    // All at once: each build is mostly one esbuild process.
    built = await Promise.all(workers.map(build));
    for (const b of built) {
      process.stdout.write(
        `${b.name}: ${(b.minified / KB).toFixed(1)} KB minified, ${(b.gzipped / KB).toFixed(1)} KB gzipped (budget ${b.budget / KB} KB)\n`,
      );
    }
  }, 240_000);

  afterAll(async () => {
    if (outRoot) await rm(outRoot, { recursive: true, force: true });
  });

  it.each(workers.map((w) => w.name))("the %s is within its gzipped budget", (name) => {
    const b = built.find((x) => x.name === name);
    expect(b, `${name} was built`).toBeDefined();
    expect(b?.gzipped).toBeLessThanOrEqual(b?.budget ?? 0);
  });

  // The stand-ins of the `alias` entries are in the deployed bundles only (the tests and the local stack build
  // without them): each bundle is started in workerd, where a stand-in a module calls at load (drizzle's column
  // builders for a table declared with a callback) would fail the start. Without its configuration the app
  // answers 500 (the events worker, which has no `/healthz`, 404); an answer of the app at all is the point.
  it.each(workers.map((w) => w.name))(
    "the %s as deployed starts in workerd and answers",
    async (name) => {
      const b = built.find((x) => x.name === name);
      const mf = new Miniflare({
        modules: true,
        scriptPath: join(b?.outdir ?? "", "index.js"),
        modulesRoot: b?.outdir ?? "",
        compatibilityDate: "2026-05-01",
        compatibilityFlags: ["nodejs_compat"],
      });
      try {
        // Our app's JSON (the events worker has no /healthz: its 404), not the runtime's failure.
        const response = await mf.dispatchFetch("http://localhost/healthz");
        const text = await response.text();
        expect([200, 404, 500]).toContain(response.status);
        expect(() => JSON.parse(text)).not.toThrow();
      } finally {
        await mf.dispose();
      }
    },
    60_000,
  );

  it("the events worker does not bundle the payments provider's SDK (verification is WebCrypto)", () => {
    const events = built.find((b) => b.name === "events worker");
    const inputs = Object.keys(events?.meta.inputs ?? {});
    expect(inputs.length).toBeGreaterThan(0);
    expect(inputs.filter((path) => path.includes("node_modules/stripe/"))).toEqual([]);
  });

  it("the zod stand-ins replace only zod's own modules (an alias matches its import path anywhere)", () => {
    for (const b of built) {
      const importers = Object.entries(b.meta.inputs).flatMap(([path, input]) =>
        (input.imports ?? []).filter((i) => aliased.includes(i.original ?? "")).map(() => path),
      );
      expect(importers.length, `${b.name} imports the aliased modules`).toBeGreaterThan(0);
      expect(importers.filter((path) => !path.includes("node_modules/zod/"))).toEqual([]);
      // And zod's real ones are gone.
      const inputs = Object.keys(b.meta.inputs);
      expect(inputs.filter((path) => /zod\/v4\/(locales\/index|core\/compile)\.js$/.test(path))).toEqual([]);
      expect(inputs.filter((path) => /zod\/v4\/locales\/(?!en\.js)/.test(path))).toEqual([]);
      expect(inputs.filter((path) => path.endsWith("zod/v4/classic/from-json-schema.js"))).toEqual([]);
      expect(
        inputs.filter((path) =>
          /zod\/v4\/core\/(json-schema-processors|to-json-schema|json-schema-generator)\.js$/.test(path),
        ),
      ).toEqual([]);
    }
  });

  it("the drizzle column-builders stand-in replaces only pg-core's table module's import, which our tables never need", async () => {
    for (const b of built) {
      const importers = Object.entries(b.meta.inputs).flatMap(([path, input]) =>
        (input.imports ?? []).filter((i) => i.original === "./columns/all.js").map(() => path),
      );
      expect(importers, b.name).toEqual(["node_modules/drizzle-orm/pg-core/table.js"]);
      expect(Object.keys(b.meta.inputs).filter((path) => path.endsWith("pg-core/columns/all.js"))).toEqual(
        [],
      );
    }
    // `pgTable("name", (columns) => ({...}))` would call the stand-in and fail at start-up: every table of
    // ours is declared with an object of the builders it imports.
    const schemaFolder = join(import.meta.dirname, "../../schema");
    for (const file of await readdir(schemaFolder)) {
      const source = await readFile(join(schemaFolder, file), "utf8");
      expect(source, file).not.toMatch(/pgTable\(\s*["'`][^"'`]*["'`]\s*,\s*(\([^)]*\)|\w+)\s*=>/);
    }
  });

  it.each(["API worker", "tracking worker", "console worker"])(
    "the %s: the OpenAPI generator stand-in replaces only @hono/zod-openapi's import, the generators are gone",
    (name) => {
      const worker = built.find((b) => b.name === name);
      const importers = Object.entries(worker?.meta.inputs ?? {}).flatMap(([path, input]) =>
        (input.imports ?? []).filter((i) => i.original === "@asteasolutions/zod-to-openapi").map(() => path),
      );
      expect(importers.length).toBeGreaterThan(0);
      expect(importers.filter((path) => !path.includes("node_modules/@hono/zod-openapi/"))).toEqual([]);
      const kept = Object.values(worker?.meta.outputs ?? {}).flatMap((output) =>
        Object.entries(output.inputs)
          .filter(([, input]) => input.bytesInOutput > 0)
          .map(([path]) => path),
      );
      expect(kept).toContain("lib/validation/zod-to-openapi-without-generator.ts");
      // The package's registry and schema metadata stay (request time); its generators' messages do not.
      expect(worker?.code).toContain("already exists in the registry");
      expect(worker?.code).not.toContain("Conflicting names for parameter");
      expect(worker?.code).not.toContain("Unknown zod object type");
    },
  );

  /** The source files a worker's code keeps (inputs tree-shaken to nothing are left out). */
  function kept(name: string): string[] {
    const worker = built.find((b) => b.name === name);
    return Object.values(worker?.meta.outputs ?? {}).flatMap((output) =>
      Object.entries(output.inputs)
        .filter(([, input]) => input.bytesInOutput > 0)
        .map(([path]) => path),
    );
  }

  it.each([
    // The hot path: none of the other routes, no sign-in.
    [
      "tracking worker",
      "functions/api/routes/track/click.ts",
      /^functions\/api\/routes\/(?!track\/|tracker-script)|node_modules\/jose\/|lib\/identity\//,
    ],
    // The program-key API: none of the tracking or console routes, no sign-in or ID-token check (only the
    // errors and the OAuth state store, which the payments provider's Connect shares), no dashboard page.
    [
      "API worker",
      "functions/api/routes/programs/readiness.ts",
      /^functions\/api\/routes\/(track\/|tracker-script|tracking\/|cli\/|auth\/|dashboard\/|docs)|node_modules\/jose\/|lib\/identity\/(?!identity-errors|oauth-state-store)|hono\/dist\/jsx\//,
    ],
    // What a person signs in to: none of the tracking or program-key routes.
    [
      "console worker",
      "functions/api/routes/cli/status.ts",
      /^functions\/api\/routes\/(track\/|tracker-script|programs\/(?!signed-in))/,
    ],
  ])("the %s bundles its own routes and none of the others'", (name, own, others) => {
    const files = kept(name);
    expect(files).toContain(own);
    expect(files.filter((path) => others.test(path))).toEqual([]);
  });

  /**
   * The code that reads a binding, and the binding: a worker whose bundle keeps such a file must declare the
   * binding in its config (the tests' routed entry gives all three HTTP workers every binding, so only the
   * configs themselves can show one missing).
   */
  const bindingReaders: [file: string, binding: string, declaredAs: RegExp][] = [
    [
      "lib/notifications/publish.ts",
      "NOTIFICATIONS",
      /\[\[queues\.producers\]\]\s*binding = "NOTIFICATIONS"/,
    ],
    [
      "functions/api/routes/programs/webhooks.ts",
      "WEBHOOKS",
      /\[\[queues\.producers\]\]\s*binding = "WEBHOOKS"/,
    ],
    [
      "functions/api/routes/tracking/tracking-worker-calls.ts",
      "TRACKING",
      /\[\[services\]\]\s*binding = "TRACKING"/,
    ],
    ["functions/api/openapi-asset.ts", "ASSETS", /\[assets\][^[]*binding = "ASSETS"/],
    ["functions/api/routes/dashboard/static-assets.ts", "ASSETS", /\[assets\][^[]*binding = "ASSETS"/],
  ];

  it.each(workers.map((w) => [w.name, w.config]))(
    "the %s declares every binding its code reads (%s)",
    async (name, config) => {
      const toml = await readFile(config, "utf8");
      const files = kept(name);
      const needed = bindingReaders.filter(([file]) => files.includes(file));
      for (const [file, binding, declaredAs] of needed)
        expect(declaredAs.test(toml), `${file} reads ${binding}`).toBe(true);
    },
  );

  it("each binding is read by some worker's code, so the check above runs", () => {
    const everyKept = built.flatMap((b) => kept(b.name));
    expect(bindingReaders.filter(([file]) => !everyKept.includes(file))).toEqual([]);
  });

  it("the sign-in bundles no OpenID client library and no jose (our client and ID token check are fetch + WebCrypto)", () => {
    const consoleWorker = built.find((b) => b.name === "console worker");
    const inputs = Object.keys(consoleWorker?.meta.inputs ?? {});
    expect(inputs.length).toBeGreaterThan(0);
    expect(inputs.filter((path) => /node_modules\/(openid-client|oauth4webapi)\//.test(path))).toEqual([]);
    expect(kept("console worker")).toContain("lib/identity/oidc-client.ts");
    // What matters is the code: a module imported and then tree-shaken away stays an input, of 0 bytes.
    expect(kept("console worker").filter((path) => path.includes("node_modules/jose/"))).toEqual([]);
    // And the signature is still checked: ours is in the code (lib/identity/jws-algorithms.ts).
    expect(consoleWorker?.code).toContain("RSASSA-PKCS1-v1_5");
  });
});
