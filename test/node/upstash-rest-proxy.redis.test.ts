import { createHash, randomUUID } from "node:crypto";
import { Ratelimit } from "@upstash/ratelimit";
import { Redis, type RedisConfigNodejs } from "@upstash/redis";
import { Redis as IORedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstashProxy, type UpstashProxy } from "../../dev/upstash-rest-proxy.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const PREFIX = `test:upstash-proxy:${randomUUID()}`;
const TOKEN = `token-${randomUUID()}`;

const UNICODE = "Zoë – naïve ✓ 🚀 日本語 \u0000 end";
const JSON_LOOKING = '{"a":1,"b":["ü",true],"c":null}';

const sha1 = (text: string): string => createHash("sha1").update(text, "utf8").digest("hex");
const key = (name: string): string => `${PREFIX}:${name}`;

let proxy: UpstashProxy;
let direct: IORedis;
const extraProxies: UpstashProxy[] = [];

function client(overrides: Partial<RedisConfigNodejs> = {}): Redis {
  return new Redis({ url: proxy.url, token: TOKEN, enableTelemetry: false, ...overrides });
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${proxy.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

beforeAll(async () => {
  proxy = await startUpstashProxy({ token: TOKEN, redisUrl: REDIS_URL });
  direct = new IORedis(REDIS_URL);
});

afterAll(async () => {
  for (const p of extraProxies) await p.close();
  await proxy?.close();
  if (direct) {
    for (const pattern of [`${PREFIX}:*`, `${PREFIX}-rl*`]) {
      const keys: string[] = [];
      for await (const batch of direct.scanStream({ match: pattern, count: 500 })) keys.push(...batch);
      if (keys.length > 0) await direct.del(...keys);
    }
    await direct.quit();
  }
});

describe("@upstash/redis through the proxy", () => {
  it("round-trips unicode and JSON-looking strings, and stores the exact bytes in Redis", async () => {
    const redis = client();
    const raw = client({ automaticDeserialization: false });

    expect(await redis.set(key("unicode"), UNICODE)).toBe("OK");
    expect(await redis.get(key("unicode"))).toBe(UNICODE);
    expect(await direct.get(key("unicode"))).toBe(UNICODE);

    await redis.set(key("json"), JSON_LOOKING);
    // The client parses JSON-looking values by default; the raw client shows the bytes were not altered.
    expect(await redis.get(key("json"))).toEqual({ a: 1, b: ["ü", true], c: null });
    expect(await raw.get(key("json"))).toBe(JSON_LOOKING);
    expect(await direct.get(key("json"))).toBe(JSON_LOOKING);

    await redis.set(key("object"), { name: UNICODE });
    expect(await redis.get(key("object"))).toEqual({ name: UNICODE });

    // A value that is itself "OK" must not be confused with the status reply the client special-cases.
    await redis.set(key("ok"), "OK");
    expect(await raw.get(key("ok"))).toBe("OK");
    expect(await redis.mget(key("ok"), key("unicode"), key("missing"))).toEqual(["OK", UNICODE, null]);

    expect(await redis.get(key("missing"))).toBeNull();
  });

  it("incr, expire and ttl", async () => {
    const redis = client();
    expect(await redis.incr(key("counter"))).toBe(1);
    expect(await redis.incrby(key("counter"), 41)).toBe(42);
    expect(await redis.expire(key("counter"), 100)).toBe(1);
    const ttl = await redis.ttl(key("counter"));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(100);
    expect(await direct.ttl(key("counter"))).toBeGreaterThan(0);
    expect(await redis.expire(key("no-such-key"), 100)).toBe(0);
  });

  it("hash ops", async () => {
    const redis = client();
    expect(await redis.hset(key("hash"), { name: UNICODE, json: JSON_LOOKING, n: 5 })).toBe(3);
    expect(await redis.hget(key("hash"), "name")).toBe(UNICODE);
    expect(await redis.hincrby(key("hash"), "n", 2)).toBe(7);
    expect(await redis.hgetall(key("hash"))).toEqual({
      name: UNICODE,
      json: { a: 1, b: ["ü", true], c: null },
      n: 7,
    });
    expect(await redis.hmget(key("hash"), "name", "absent")).toEqual({ name: UNICODE, absent: null });
    expect(await direct.hget(key("hash"), "json")).toBe(JSON_LOOKING);
  });

  it("pipeline, with a failing command reported in place", async () => {
    const redis = client();
    const results = await redis
      .pipeline()
      .set(key("p:str"), UNICODE)
      .incr(key("p:n"))
      .incr(key("p:n"))
      .get(key("p:str"))
      .hset(key("p:hash"), { f: JSON_LOOKING })
      .hget(key("p:hash"), "f")
      .get(key("p:absent"))
      .exec();
    expect(results).toEqual(["OK", 1, 2, UNICODE, 1, { a: 1, b: ["ü", true], c: null }, null]);

    const withError = await redis.pipeline().incr(key("p:str")).get(key("p:n")).exec({ keepErrors: true });
    expect(withError[0]?.error).toMatch(/not an integer/);
    expect(withError[1]).toEqual({ error: undefined, result: 2 });
    await expect(redis.pipeline().incr(key("p:str")).exec()).rejects.toThrow(/not an integer/);
  });

  it("multi-exec runs as a transaction", async () => {
    const redis = client();
    const results = await redis
      .multi()
      .set(key("m:n"), 10)
      .incr(key("m:n"))
      .get(key("m:n"))
      .set(key("m:s"), UNICODE)
      .get(key("m:s"))
      .exec();
    expect(results).toEqual(["OK", 11, 11, "OK", UNICODE]);
  });

  it("command errors become rejections with Redis's message", async () => {
    const redis = client({ enableAutoPipelining: false });
    await redis.set(key("not-a-number"), "abc");
    await expect(redis.incr(key("not-a-number"))).rejects.toThrow(/ERR value is not an integer/);
    // The same error through the default, auto-pipelined client.
    await expect(client().incr(key("not-a-number"))).rejects.toThrow(/ERR value is not an integer/);
  });

  it("runs shebang scripts on Redis 7.0 and answers the client's sha afterwards", async () => {
    const redis = client();
    const script = `#!lua flags=allow-key-locking\n-- ${randomUUID()}\nreturn {redis.call("INCR", KEYS[1]), ARGV[1]}`;
    const originalSha = sha1(script);

    await expect(redis.evalsha(originalSha, [key("script:n")], [UNICODE])).rejects.toThrow(/NOSCRIPT/);
    expect(await redis.eval(script, [key("script:n")], [UNICODE])).toEqual([1, UNICODE]);
    proxy.resetStats();
    expect(await redis.evalsha(originalSha, [key("script:n")], [UNICODE])).toEqual([2, UNICODE]);
    expect(proxy.stats()).toEqual({ requests: 1, commands: 1 });

    const loadedScript = `#!lua flags=allow-key-locking\n-- ${randomUUID()}\nreturn ARGV[1]`;
    expect(await redis.scriptLoad(loadedScript)).toBe(sha1(loadedScript));
    expect(await redis.scriptExists(sha1(loadedScript), "0".repeat(40))).toEqual([1, 0]);
    expect(await redis.evalsha(sha1(loadedScript), [], [JSON_LOOKING])).toEqual({
      a: 1,
      b: ["ü", true],
      c: null,
    });
    // Inside a transaction the proxy cannot retry a NOSCRIPT, so it must still resolve the client's sha.
    expect(
      await redis
        .multi()
        .evalsha(originalSha, [key("script:n")], ["x"])
        .exec(),
    ).toEqual([[3, "x"]]);
  });
});

describe("wire format", () => {
  it("base64-encodes strings at any depth when asked, keeps integers and nil", async () => {
    await post("/", ["SET", key("wire"), UNICODE]);
    await post("/", ["HSET", key("wire:h"), "f", UNICODE]);
    const b64 = { "Upstash-Encoding": "base64" };
    const encoded = Buffer.from(UNICODE, "utf8").toString("base64");

    expect(await post("/", ["SET", key("wire"), UNICODE], b64)).toEqual({
      status: 200,
      body: { result: "OK" },
    });
    expect(await post("/", ["GET", key("wire")], b64)).toEqual({ status: 200, body: { result: encoded } });
    expect(await post("/", ["GET", key("wire:absent")], b64)).toEqual({
      status: 200,
      body: { result: null },
    });
    expect(await post("/", ["HGETALL", key("wire:h")], b64)).toEqual({
      status: 200,
      body: { result: [Buffer.from("f").toString("base64"), encoded] },
    });
    expect(await post("/", ["EVAL", "return {1, {ARGV[1], 2}, false}", "0", UNICODE], b64)).toEqual({
      status: 200,
      body: { result: [1, [encoded, 2], null] },
    });
    expect(
      await post(
        "/pipeline",
        [
          ["GET", key("wire")],
          ["STRLEN", key("wire")],
        ],
        b64,
      ),
    ).toEqual({
      status: 200,
      body: [{ result: encoded }, { result: Buffer.byteLength(UNICODE) }],
    });
    expect(await post("/", ["GET", key("wire")])).toEqual({ status: 200, body: { result: UNICODE } });

    // HGETALL must stay a flat array in Redis's order (a JS object would move "1" before "z").
    await post("/", ["HSET", key("wire:order"), "z", "last?", "1", "first?"]);
    expect(await post("/", ["HGETALL", key("wire:order")])).toEqual({
      status: 200,
      body: { result: ["z", "last?", "1", "first?"] },
    });
  });

  it("answers NOSCRIPT with status 400 so the client falls back to EVAL", async () => {
    const res = await post("/", ["EVALSHA", sha1(randomUUID()), "0"]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.stringMatching(/^NOSCRIPT /) });
  });

  it("refuses commands that would change the shared Redis connection", async () => {
    for (const command of [["SELECT", "1"], ["MULTI"], ["CLIENT", "REPLY", "OFF"]]) {
      const res = await post("/", command);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: expect.stringMatching(/not allowed/) });
    }
    expect(await post("/", ["PING"])).toEqual({ status: 200, body: { result: "PONG" } });
  });

  it("refuses a wrong or missing token with 401", async () => {
    for (const authorization of [`Bearer wrong-${TOKEN}`, "", `Basic ${TOKEN}`]) {
      const res = await fetch(`${proxy.url}/`, {
        method: "POST",
        headers: authorization ? { authorization } : {},
        body: JSON.stringify(["PING"]),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "Unauthorized" });
    }
    const wrong = new Redis({ url: proxy.url, token: "wrong", enableTelemetry: false });
    await expect(wrong.get(key("anything"))).rejects.toThrow(/Unauthorized/);
  });
});

describe("@upstash/ratelimit through the proxy", () => {
  async function awayFromWindowEdge(windowMs: number): Promise<void> {
    // A fixed window that rolls over mid-test would reset the counter; 3 s of margin is plenty for 5 calls.
    const left = windowMs - (Date.now() % windowMs);
    if (left < 3_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
  }

  it("fixedWindow(3, 60 s): three pass, the fourth is refused; one request per warm check", async () => {
    // Its own proxy, so the script is certainly unknown to it and the cold path is measured.
    const fresh = await startUpstashProxy({ token: TOKEN, redisUrl: REDIS_URL });
    extraProxies.push(fresh);
    const redis = new Redis({ url: fresh.url, token: TOKEN, enableTelemetry: false });
    const ratelimit = new Ratelimit({
      redis,
      limiter: Ratelimit.fixedWindow(3, "60 s"),
      prefix: `${PREFIX}-rl`,
      enableProtection: false,
      analytics: false,
    });
    await awayFromWindowEdge(60_000);
    const id = `user-${randomUUID()}`;

    // Cold: EVALSHA of the client's sha -> NOSCRIPT -> EVAL with the text.
    const first = await ratelimit.limit(id);
    expect(first).toMatchObject({ success: true, limit: 3, remaining: 2 });
    expect(fresh.stats()).toEqual({ requests: 2, commands: 2 });

    fresh.resetStats();
    expect(await ratelimit.limit(id)).toMatchObject({ success: true, remaining: 1 });
    expect(fresh.stats()).toEqual({ requests: 1, commands: 1 });

    expect(await ratelimit.limit(id)).toMatchObject({ success: true, remaining: 0 });
    const before = Date.now();
    const refused = await ratelimit.limit(id);
    expect(refused).toMatchObject({ success: false, limit: 3, remaining: 0 });
    expect(refused.reset % 60_000).toBe(0);
    expect(refused.reset).toBeGreaterThan(before);
    expect(refused.reset).toBeLessThanOrEqual(before + 60_000);

    // The second window call for a fresh key, once the proxy knows the script: one request, one command.
    fresh.resetStats();
    expect(await ratelimit.limit(`user-${randomUUID()}`)).toMatchObject({ success: true, remaining: 2 });
    expect(fresh.stats()).toEqual({ requests: 1, commands: 1 });

    // A separate client and limiter (as in a new worker isolate) also stay warm: the mapping is per proxy.
    fresh.resetStats();
    const other = new Ratelimit({
      redis: new Redis({ url: fresh.url, token: TOKEN, enableTelemetry: false }),
      limiter: Ratelimit.fixedWindow(3, "60 s"),
      prefix: `${PREFIX}-rl`,
    });
    expect(await other.limit(id)).toMatchObject({ success: false, remaining: 0 });
    expect(fresh.stats()).toEqual({ requests: 1, commands: 1 });

    // Once refused, the limiter's in-memory cache answers without any request.
    fresh.resetStats();
    expect(await ratelimit.limit(id)).toMatchObject({ success: false, remaining: 0, reason: "cacheBlock" });
    expect(fresh.stats()).toEqual({ requests: 0, commands: 0 });

    const keys = await direct.keys(`${PREFIX}-rl:${id}:*`);
    expect(keys).toHaveLength(1);
    expect(await direct.get(keys[0]!)).toBe("5");
    expect(await direct.pttl(keys[0]!)).toBeGreaterThan(0);
  });

  it("slidingWindow and tokenBucket scripts also run", async () => {
    const redis = client();
    await awayFromWindowEdge(10_000);
    const sliding = new Ratelimit({
      redis,
      limiter: Ratelimit.slidingWindow(2, "10 s"),
      prefix: `${PREFIX}-rl-sliding`,
    });
    const bucket = new Ratelimit({
      redis,
      limiter: Ratelimit.tokenBucket(1, "60 s", 2),
      prefix: `${PREFIX}-rl-bucket`,
    });
    for (const limiter of [sliding, bucket]) {
      const id = `user-${randomUUID()}`;
      expect((await limiter.limit(id)).success).toBe(true);
      expect((await limiter.limit(id)).success).toBe(true);
      expect(await limiter.limit(id)).toMatchObject({ success: false, remaining: 0 });
    }
  });
});
