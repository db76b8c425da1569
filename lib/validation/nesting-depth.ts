/**
 * How deep a body's arrays and objects may nest. A real `line_items` or `additional_data` nests a few levels;
 * thousands of levels (still well under the 64 KB body limit) overflowed the stack of the recursive checks
 * and of PostgreSQL's `jsonb` input, a 500 the caller would retry forever. Refused as a 400 naming the field.
 */
export const MAX_NESTING_DEPTH = 32;

/**
 * Whether `value` nests arrays or objects more than `max` levels deep (`{}` and `[]` are one level). Walks
 * iteratively, so the check itself cannot overflow the stack, and stops at the first level beyond `max`.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== "object") return false;
  const pending: { value: object; depth: number }[] = [{ value, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.depth > max) return true;
    for (const item of Object.values(next.value)) {
      if (item !== null && typeof item === "object") pending.push({ value: item, depth: next.depth + 1 });
    }
  }
  return false;
}
