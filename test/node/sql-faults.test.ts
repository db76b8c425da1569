import { neon, neonConfig } from "@neondatabase/serverless";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SqlEndpoint, startSqlEndpoint } from "../../dev/sql-endpoint.ts";

/** The SQL endpoint's fault switch (dev/sql-faults.ts): its admin routes and what an armed fault does. */
describe("sql endpoint fault switch", () => {
  let endpoint: SqlEndpoint;
  let admin: (action: string, body: unknown, secretHeader?: string | null) => Promise<Response>;
  /** A driver whose round trips carry `scope`. */
  let scoped: (scope: string) => ReturnType<typeof neon>;

  beforeAll(async () => {
    endpoint = await startSqlEndpoint();
    admin = (action, body, secretHeader = endpoint.connectionString) =>
      fetch(new URL(`/faults/${action}`, endpoint.url), {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          ...(secretHeader === null ? {} : { "Neon-Connection-String": secretHeader }),
        },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    // The driver's settings are global: the scope of the round trip in flight (the tests run one at a time).
    let scope = "";
    neonConfig.fetchEndpoint = endpoint.url;
    neonConfig.fetchFunction = (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set("X-Fault-Scope", scope);
      return fetch(input, { ...init, headers });
    };
    const driver = neon(endpoint.connectionString);
    scoped = (name) =>
      ((strings: TemplateStringsArray, ...values: unknown[]) => {
        scope = name;
        return driver(strings, ...values);
      }) as ReturnType<typeof neon>;
  });
  afterAll(async () => {
    neonConfig.fetchFunction = undefined;
    await endpoint.close();
  });

  it.each<[string, string, unknown, string | null, number, string]>([
    [
      "no secret",
      "arm",
      { scope: "s", fault: { mode: "error" } },
      null,
      401,
      "Neon-Connection-String is required",
    ],
    [
      "a wrong secret",
      "arm",
      { scope: "s", fault: { mode: "error" } },
      "postgres://app:wrong@db.localtest.me/app",
      403,
      "The connection string's password is not this endpoint's secret",
    ],
    ["no scope", "arm", { fault: { mode: "error" } }, "", 400, '"scope" must be a non-empty string'],
    ["a bad mode", "arm", { scope: "s", fault: { mode: "crash" } }, "", 400, 'fault.mode must be "error"'],
    ["ordinal 0", "arm", { scope: "s", fault: { mode: "error", ordinal: 0 } }, "", 400, "fault.ordinal"],
    ["times 1.5", "arm", { scope: "s", fault: { mode: "error", times: 1.5 } }, "", 400, "fault.times"],
    ["a long delay", "arm", { scope: "s", fault: { mode: "timeout", delayMs: 60_000 } }, "", 400, "delayMs"],
    ["a numeric match", "arm", { scope: "s", fault: { mode: "error", match: 1 } }, "", 400, "fault.match"],
    ["a numeric ignore", "arm", { scope: "s", fault: { mode: "error", ignore: 1 } }, "", 400, "fault.ignore"],
    ["a body that is not JSON", "arm", "{nope", "", 400, "request body is not valid JSON"],
  ])("refuses %s", async (_name, action, body, secretHeader, status, message) => {
    const response = await admin(action, body, secretHeader === "" ? undefined : secretHeader);
    expect(response.status).toBe(status);
    expect(((await response.json()) as { message: string }).message).toContain(message);
  });

  it("answers 404 for an unknown action", async () => {
    expect((await admin("explode", { scope: "s" })).status).toBe(404);
  });

  it("fails the ordinal-th round trip of its scope only, `times` times, and reports what it saw", async () => {
    const sql = scoped("a");
    const other = scoped("b");
    expect((await admin("arm", { scope: "a", fault: { mode: "error", ordinal: 2, times: 2 } })).status).toBe(
      200,
    );
    await expect(sql`select 1 as one`).resolves.toEqual([{ one: 1 }]);
    await expect(other`select 1 as one`).resolves.toEqual([{ one: 1 }]);
    await expect(sql`select 2`).rejects.toMatchObject({ code: "08006" });
    await expect(sql`select 3`).rejects.toMatchObject({ code: "08006" });
    await expect(sql`select 4 as four`).resolves.toEqual([{ four: 4 }]);
    expect(await (await admin("clear", { scope: "a" })).json()).toEqual({ armed: true, seen: 4, fired: 2 });
    expect(await (await admin("state", { scope: "a" })).json()).toEqual({ armed: false, seen: 0, fired: 0 });
  });

  it("matches on SQL text; a timeout and a lost answer cut the connection, the lost one after running", async () => {
    const sql = scoped("c");
    await sql`create table fault_probe (n int)`;
    endpoint.faults.arm("c", { mode: "lost", match: "INSERT INTO fault_probe" });
    await expect(sql`select 1`).resolves.toHaveLength(1);
    await expect(sql`insert into fault_probe values (1)`).rejects.toThrow();
    expect(endpoint.faults.clear("c")).toEqual({ armed: true, seen: 1, fired: 1 });
    endpoint.faults.arm("c", { mode: "timeout", delayMs: 10 });
    await expect(sql`insert into fault_probe values (2)`).rejects.toThrow();
    endpoint.faults.clear("c");
    expect((await endpoint.query("select n from fault_probe")).rows).toEqual([{ n: "1" }]);
  });

  it("neither counts nor fails a round trip with a statement containing `ignore`", async () => {
    const sql = scoped("d");
    endpoint.faults.arm("d", { mode: "error", ordinal: 2, ignore: "select 'beside'" });
    await expect(sql`select 1 as one`).resolves.toEqual([{ one: 1 }]);
    await expect(sql`select 'beside' as b`).resolves.toEqual([{ b: "beside" }]);
    await expect(sql`select 2`).rejects.toMatchObject({ code: "08006" });
    expect(endpoint.faults.clear("d")).toEqual({ armed: true, seen: 2, fired: 1 });
  });
});
