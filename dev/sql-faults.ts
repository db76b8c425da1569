/**
 * The SQL endpoint's fault switch (test/setup and the reliability suite arm it): makes a chosen round trip
 * of the database driver fail, so tests can see what every request does when the database fails at each
 * step, with the real driver and the real error path, and nothing mocked.
 *
 * A fault is armed for a scope: only round trips that carry the `X-Fault-Scope` header with that value are
 * seen (the suite's driver adds it), so test files running in parallel against the one endpoint never hit
 * each other's faults. Of the round trips seen after arming (and, with `match`, only those with a statement
 * whose SQL text contains it; with `ignore`, none with a statement containing that), the `ordinal`-th and the
 * `times - 1` after it fail. Round trips without the header are of the scope `""` (`UNSCOPED`): a test that
 * starts a stack of its own, whose workers send no header, arms that one.
 */

export type FaultMode =
  /** Answers a database error (`code`, default 08006 connection_failure) without running anything. */
  | "error"
  /** Holds the round trip `delayMs`, then cuts the connection without running anything (a timeout). */
  | "timeout"
  /** Runs the round trip (a batch commits) and then cuts the connection: the caller never learns it did. */
  | "lost";

export interface FaultSpec {
  mode: FaultMode;
  /** 1-based, counted over the scope's (matching) round trips after arming; default 1. */
  ordinal?: number;
  /** Case-insensitive substring of any statement of the round trip. */
  match?: string;
  /**
   * Case-insensitive substring: a round trip with a statement containing it is neither counted nor failed.
   * For work of the scope that runs beside the request under test, at a time no test can wait for (a queue
   * consumer's write, delivered when its batch's timeout ends).
   */
  ignore?: string;
  /** How many consecutive seen round trips fail, from `ordinal` on; default 1. */
  times?: number;
  /** SQLSTATE for "error". A 23xxx/P0001 code is deterministic (the statements were refused); 08/57/XX transient. */
  code?: string;
  message?: string;
  delayMs?: number;
}

export interface FaultState {
  armed: boolean;
  /** Round trips of the scope seen (counted) since arming. */
  seen: number;
  fired: number;
}

export type FaultAction =
  | { kind: "pass" }
  | { kind: "error"; status: 400; body: { message: string; code: string; severity: "ERROR" } }
  | { kind: "timeout"; delayMs: number }
  | { kind: "lost" };

interface Armed {
  spec: FaultSpec;
  seen: number;
  fired: number;
}

const MAX_DELAY_MS = 30_000;

/** The scope of the round trips that carry no `X-Fault-Scope` header. */
export const UNSCOPED = "";

export class FaultSwitch {
  private readonly faults = new Map<string, Armed>();

  arm(scope: string, spec: FaultSpec): void {
    this.faults.set(scope, { spec: validated(spec), seen: 0, fired: 0 });
  }

  /** Disarms the scope and tells what happened since it was armed. */
  clear(scope: string): FaultState {
    const state = this.state(scope);
    this.faults.delete(scope);
    return state;
  }

  state(scope: string): FaultState {
    const armed = this.faults.get(scope);
    return armed
      ? { armed: true, seen: armed.seen, fired: armed.fired }
      : { armed: false, seen: 0, fired: 0 };
  }

  /** What to do with a round trip of `scope` carrying these statements. */
  decide(scope: string | undefined, statements: readonly string[]): FaultAction {
    const armed = this.faults.get(scope ?? UNSCOPED);
    if (!armed) return { kind: "pass" };
    const { spec } = armed;
    const contains = (text: string) => statements.some((s) => s.toLowerCase().includes(text.toLowerCase()));
    if (spec.match !== undefined && !contains(spec.match)) return { kind: "pass" };
    if (spec.ignore !== undefined && contains(spec.ignore)) return { kind: "pass" };
    armed.seen++;
    if (armed.seen < (spec.ordinal ?? 1) || armed.fired >= (spec.times ?? 1)) return { kind: "pass" };
    armed.fired++;
    if (spec.mode === "timeout") return { kind: "timeout", delayMs: spec.delayMs ?? 100 };
    if (spec.mode === "lost") return { kind: "lost" };
    return {
      kind: "error",
      status: 400,
      body: {
        message: spec.message ?? "injected fault (sql endpoint fault switch)",
        code: spec.code ?? "08006",
        severity: "ERROR",
      },
    };
  }
}

function validated(value: unknown): FaultSpec {
  if (typeof value !== "object" || value === null) throw new TypeError("fault must be an object");
  const spec = value as Record<string, unknown>;
  if (!["error", "timeout", "lost"].includes(spec.mode as string)) {
    throw new TypeError('fault.mode must be "error", "timeout" or "lost"');
  }
  for (const field of ["ordinal", "times"] as const) {
    const n = spec[field];
    if (n !== undefined && (!Number.isInteger(n) || (n as number) < 1)) {
      throw new TypeError(`fault.${field} must be a positive integer`);
    }
  }
  const delay = spec.delayMs;
  if (
    delay !== undefined &&
    (!Number.isInteger(delay) || (delay as number) < 0 || (delay as number) > MAX_DELAY_MS)
  ) {
    throw new TypeError(`fault.delayMs must be an integer from 0 to ${MAX_DELAY_MS}`);
  }
  for (const field of ["match", "ignore", "code", "message"] as const) {
    if (spec[field] !== undefined && typeof spec[field] !== "string") {
      throw new TypeError(`fault.${field} must be a string`);
    }
  }
  return spec as unknown as FaultSpec;
}
