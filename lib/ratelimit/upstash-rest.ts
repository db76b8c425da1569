/**
 * The few calls the rate limiter makes to Upstash's Redis REST API, with plain `fetch` (the SDK ships a class
 * per Redis command, about 90 KB minified of the worker). One command is `POST <url>` with the command as a
 * JSON array and `Authorization: Bearer <token>`; the answer is `{"result": ...}` or `{"error": "..."}`.
 * Replies come back as JSON (no `Upstash-Encoding: base64`): the limiter reads only integers.
 */
export interface UpstashRestOptions {
  url: string;
  token: string;
  /** Retries after a network failure (not after a Redis error); the SDK's setting was one. */
  retries?: number;
  retryDelayMs?: number;
}

/** A reply Redis (or Upstash) refused, with its message (`NOSCRIPT ...`, `ERR ...`). */
export class UpstashCommandError extends Error {
  override name = "UpstashCommandError";
}

export class UpstashRest {
  constructor(private readonly options: UpstashRestOptions) {}

  async command(args: (string | number)[]): Promise<unknown> {
    const retries = this.options.retries ?? 1;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        // Looked up at call time, not captured: tests count the limiter's round trips by wrapping `fetch`.
        response = await fetch(this.options.url, {
          method: "POST",
          headers: { Authorization: `Bearer ${this.options.token}`, "Content-Type": "application/json" },
          body: JSON.stringify(args),
        });
      } catch (error) {
        if (attempt >= retries) throw error;
        await new Promise((resolve) => setTimeout(resolve, this.options.retryDelayMs ?? 50));
        continue;
      }
      const body = (await response.json().catch(() => ({}))) as { result?: unknown; error?: string };
      if (!response.ok || body.error !== undefined) {
        throw new UpstashCommandError(body.error ?? `Upstash answered HTTP ${response.status}`);
      }
      return body.result;
    }
  }

  /**
   * Runs a Lua script by its SHA-1 (the text need not travel on every call), loading it with EVAL when
   * Redis has not seen it (NOSCRIPT: first call, a flush or a restart).
   */
  async script(
    script: { text: string; sha1: string },
    keys: string[],
    args: (string | number)[],
  ): Promise<unknown> {
    try {
      return await this.command(["EVALSHA", script.sha1, keys.length, ...keys, ...args]);
    } catch (error) {
      if (!(error instanceof UpstashCommandError) || !error.message.includes("NOSCRIPT")) throw error;
      return this.command(["EVAL", script.text, keys.length, ...keys, ...args]);
    }
  }
}
