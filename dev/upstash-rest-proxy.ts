/**
 * A local stand-in for Upstash's Redis REST API, in front of a real Redis.
 *
 * Production rate limiting calls Upstash's REST API with `fetch` (lib/ratelimit/upstash-rest.ts), and the
 * SDK (`@upstash/ratelimit` -> `@upstash/redis`) speaks the same protocol, so tests and local runs point
 * either at this proxy instead of mocking it. Only what those clients send is
 * implemented: `POST /` (one command), `POST /pipeline`, `POST /multi-exec`. `@upstash/redis` never uses the
 * `/set/k/v` URL form for ordinary commands (only for SUBSCRIBE streams), so neither does this proxy.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import IORedis from "ioredis";

export interface UpstashProxyOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Default `redis://127.0.0.1:6379`. */
  redisUrl?: string;
  token: string;
}

export interface UpstashProxy {
  /** `http://127.0.0.1:<port>`: what `new Redis({ url })` from `@upstash/redis` takes. */
  url: string;
  port: number;
  token: string;
  /**
   * `requests`: HTTP requests received (including rejected ones). `commands`: commands sent to Redis,
   * where a proxy-side EVALSHA -> EVAL fallback counts as two.
   */
  stats(): { requests: number; commands: number };
  resetStats(): void;
  close(): Promise<void>;
}

type RedisArg = string | Buffer;

interface Step {
  name: string;
  args: RedisArg[];
}

interface Plan extends Step {
  /** Tried when `name` answers NOSCRIPT: the stripped text of a script Redis has forgotten (SCRIPT FLUSH, restart). */
  fallback?: Step;
  mapResult?: (result: unknown) => unknown;
  afterSuccess?: () => void;
}

interface StrippedScript {
  sha: string;
  text: string;
}

class ProxyCommandError extends Error {}

const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";
const MAX_BODY_BYTES = 64 * 1024 * 1024;

// These change or hold the state of the one shared connection, which every HTTP request multiplexes over;
// Upstash refuses them over REST as well.
const CONNECTION_STATE_COMMANDS = new Set([
  "auth",
  "hello",
  "select",
  "multi",
  "exec",
  "discard",
  "watch",
  "unwatch",
  "subscribe",
  "psubscribe",
  "ssubscribe",
  "unsubscribe",
  "punsubscribe",
  "sunsubscribe",
  "monitor",
  "quit",
  "reset",
]);
const CONNECTION_STATE_CLIENT_SUBCOMMANDS = new Set(["reply", "tracking", "caching"]);

// Redis 7.0 rejects the `allow-key-locking` flag that @upstash/ratelimit 2.x puts in its shebang. The line is
// blanked rather than removed so line numbers in Lua error messages still match the client's source.
const SHEBANG = /^#!lua\b[^\r\n]*/;

const sha1 = (text: string): string => createHash("sha1").update(text, "utf8").digest("hex");

// ioredis keys its reply transformers by the exact command name ("hgetall" becomes an object, which would
// reorder numeric-looking fields and break the array the client expects); Redis does not care about case.
const wireName = (name: string): string => name.toUpperCase();

function toArg(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value) ?? "";
}

function parseCommand(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || typeof value[0] !== "string") {
    throw new ProxyCommandError("ERR command must be a non-empty JSON array starting with the command name");
  }
  return value.map(toArg);
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("NOSCRIPT");
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isReplyError(error: unknown): boolean {
  return error instanceof ProxyCommandError || (error instanceof Error && error.name === "ReplyError");
}

/**
 * Upstash encodes every string reply when asked for base64 (the client then decodes with `atob`), except
 * that a top-level "OK" goes out as-is, which the client special-cases. Integers stay JSON numbers.
 */
function encodeReply(value: unknown, base64: boolean, topLevel = true): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return value;
  if (Buffer.isBuffer(value)) {
    if (!base64) return value.toString("utf8");
    if (topLevel && value.length === 2 && value.toString("latin1") === "OK") return "OK";
    return value.toString("base64");
  }
  if (typeof value === "string") return encodeReply(Buffer.from(value, "utf8"), base64, topLevel);
  if (Array.isArray(value)) return value.map((item) => encodeReply(item, base64, false));
  // A Lua script can return an error table inside an array; RESP2 has nowhere else to put it.
  if (value instanceof Error) return encodeReply(Buffer.from(value.message, "utf8"), base64, topLevel);
  return encodeReply(Buffer.from(String(value), "utf8"), base64, topLevel);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new ProxyCommandError("ERR request body too large"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(payload),
  });
  res.end(payload);
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const match = header?.match(/^Bearer\s+(.+)$/i);
  if (!match?.[1]) return false;
  const given = Buffer.from(match[1].trim());
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function startUpstashProxy(opts: UpstashProxyOptions): Promise<UpstashProxy> {
  if (!opts.token) throw new Error("startUpstashProxy: a non-empty token is required");
  const host = opts.host ?? "127.0.0.1";
  const redis = new IORedis(opts.redisUrl ?? DEFAULT_REDIS_URL, { lazyConnect: true });
  // Without a listener ioredis prints every reconnect failure; commands report their own errors anyway.
  redis.on("error", () => {});
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw error;
  }

  // Keyed by the SHA1 the client computed over the original text, which Redis never sees.
  const scripts = new Map<string, StrippedScript>();
  let requests = 0;
  let commands = 0;

  function strip(script: string): string {
    if (!SHEBANG.test(script)) return script;
    const stripped = script.replace(SHEBANG, "");
    scripts.set(sha1(script), { sha: sha1(stripped), text: stripped });
    return stripped;
  }

  function plan(command: string[], inTransaction: boolean): Plan {
    const [rawName, ...args] = command as [string, ...string[]];
    const name = rawName.toLowerCase();
    if (
      CONNECTION_STATE_COMMANDS.has(name) ||
      (name === "client" && CONNECTION_STATE_CLIENT_SUBCOMMANDS.has(args[0]?.toLowerCase() ?? ""))
    ) {
      throw new ProxyCommandError(`ERR Command is not allowed through the Upstash REST proxy: ${rawName}`);
    }
    if ((name === "eval" || name === "eval_ro") && args[0] !== undefined) {
      return { name, args: [strip(args[0]), ...args.slice(1)] };
    }
    if ((name === "evalsha" || name === "evalsha_ro") && args[0] !== undefined) {
      const known = scripts.get(args[0].toLowerCase());
      // An unknown sha goes to Redis untouched: a shebang-free script may really be cached there, and
      // otherwise Redis's own NOSCRIPT is what makes the client fall back to EVAL.
      if (!known) return { name, args };
      const evalName = name === "evalsha" ? "eval" : "eval_ro";
      const rest = args.slice(1);
      // Inside MULTI a NOSCRIPT only surfaces at EXEC, too late to retry atomically, so send the text.
      if (inTransaction) return { name: evalName, args: [known.text, ...rest] };
      return { name, args: [known.sha, ...rest], fallback: { name: evalName, args: [known.text, ...rest] } };
    }
    if (name === "script") {
      const sub = args[0]?.toLowerCase();
      if (sub === "load" && args[1] !== undefined) {
        const original = args[1];
        const stripped = strip(original);
        if (stripped === original) return { name, args };
        // The client will EVALSHA with the sha of its own text, so that is the one to hand back.
        return { name, args: [args[0]!, stripped], mapResult: () => Buffer.from(sha1(original)) };
      }
      if (sub === "exists") {
        return {
          name,
          args: [args[0]!, ...args.slice(1).map((sha) => scripts.get(sha.toLowerCase())?.sha ?? sha)],
        };
      }
      if (sub === "flush") return { name, args, afterSuccess: () => scripts.clear() };
    }
    return { name, args };
  }

  async function run(step: Plan): Promise<unknown> {
    commands++;
    try {
      const result = await redis.callBuffer(wireName(step.name), ...step.args);
      step.afterSuccess?.();
      return step.mapResult ? step.mapResult(result) : result;
    } catch (error) {
      if (!step.fallback || !isNoScript(error)) throw error;
      commands++;
      return await redis.callBuffer(wireName(step.fallback.name), ...step.fallback.args);
    }
  }

  async function handleSingle(body: unknown, base64: boolean): Promise<[number, unknown]> {
    try {
      const result = await run(plan(parseCommand(body), false));
      return [200, { result: encodeReply(result, base64) }];
    } catch (error) {
      return [isReplyError(error) ? 400 : 500, { error: errorMessage(error) }];
    }
  }

  async function handlePipeline(body: unknown, base64: boolean): Promise<[number, unknown]> {
    if (!Array.isArray(body) || body.length === 0) {
      return [400, { error: "ERR pipeline body must be a non-empty JSON array of commands" }];
    }
    // Dispatched together so ioredis writes them back to back in order: one round trip, not one per
    // command. Only a proxy-side NOSCRIPT fallback (script cache flushed behind our back) runs out of order.
    const entries = await Promise.all(
      body.map(async (command) => {
        try {
          return { result: encodeReply(await run(plan(parseCommand(command), false)), base64) };
        } catch (error) {
          return { error: errorMessage(error) };
        }
      }),
    );
    return [200, entries];
  }

  async function handleMultiExec(body: unknown, base64: boolean): Promise<[number, unknown]> {
    if (!Array.isArray(body) || body.length === 0) {
      return [400, { error: "ERR multi-exec body must be a non-empty JSON array of commands" }];
    }
    let plans: Plan[];
    try {
      plans = body.map((command) => plan(parseCommand(command), true));
    } catch (error) {
      return [400, { error: errorMessage(error) }];
    }
    // ioredis queues MULTI ... EXEC as a single write, so other requests on the shared connection cannot
    // land inside the transaction.
    const transaction = redis.multi();
    for (const step of plans) transaction.callBuffer(wireName(step.name), ...step.args);
    commands += plans.length;
    try {
      const replies = (await transaction.exec()) ?? [];
      const entries = replies.map(([error, result], i) => {
        if (error) return { error: errorMessage(error) };
        const step = plans[i];
        step?.afterSuccess?.();
        return { result: encodeReply(step?.mapResult ? step.mapResult(result) : result, base64) };
      });
      return [200, entries];
    } catch (error) {
      const previous = (error as { previousErrors?: unknown[] }).previousErrors ?? [];
      const detail = previous.map(errorMessage).join("; ");
      return [
        isReplyError(error) ? 400 : 500,
        { error: detail ? `${errorMessage(error)} (${detail})` : errorMessage(error) },
      ];
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    requests++;
    if (!tokenMatches(req.headers.authorization, opts.token)) {
      sendJson(res, 401, { error: "Unauthorized" });
      return;
    }
    const path = new URL(req.url ?? "/", "http://proxy").pathname.replace(/\/+$/, "") || "/";
    const handler =
      path === "/"
        ? handleSingle
        : path === "/pipeline"
          ? handlePipeline
          : path === "/multi-exec"
            ? handleMultiExec
            : undefined;
    if (!handler) {
      sendJson(res, 404, { error: `ERR unsupported path ${path}: use POST /, /pipeline or /multi-exec` });
      return;
    }
    if (req.method !== "POST") {
      sendJson(res, 405, { error: "ERR only POST is supported" });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch (error) {
      sendJson(res, 400, { error: `ERR invalid JSON body: ${errorMessage(error)}` });
      return;
    }
    const base64 = String(req.headers["upstash-encoding"] ?? "").toLowerCase() === "base64";
    const [status, payload] = await handler(body, base64);
    sendJson(res, status, payload);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: errorMessage(error) });
      else res.destroy();
    });
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(opts.port ?? 0, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    redis.disconnect();
    throw error;
  }

  const port = (server.address() as AddressInfo).port;
  const urlHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    port,
    token: opts.token,
    stats: () => ({ requests, commands }),
    resetStats: () => {
      requests = 0;
      commands = 0;
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // fetch keeps idle sockets open; without this close() would wait for them to time out.
      server.closeAllConnections();
      await closed;
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const token = process.env.UPSTASH_PROXY_TOKEN;
  if (!token) {
    console.error("upstash-rest-proxy: set UPSTASH_PROXY_TOKEN (the token clients send as Bearer)");
    process.exit(1);
  }
  const proxy = await startUpstashProxy({
    token,
    port: Number(process.env.UPSTASH_PROXY_PORT ?? 8079),
    redisUrl: process.env.REDIS_URL ?? DEFAULT_REDIS_URL,
  });
  console.log(`upstash-rest-proxy listening on ${proxy.url}`);
  const stop = (): void => {
    proxy.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
