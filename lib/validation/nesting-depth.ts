/**
 * How deep a body's arrays and objects may nest. A real `line_items` or `additional_data` nests a few levels;
 * thousands of levels (still well under the 64 KB body limit) overflowed the stack of the recursive checks
 * and of PostgreSQL's `jsonb` input, a 500 the caller would retry forever. Refused as a 400 naming the field.
 */
export const MAX_NESTING_DEPTH = 64;

/**
 * Whether `value` nests arrays or objects more than `max` levels deep (`{}` and `[]` are one level). Walks
 * iteratively, so the check itself cannot overflow the stack, and stops at the first level beyond `max`.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== "object") return false;
  // Two parallel stacks, not one of {value, depth} pairs: no allocation per node (a hostile 64 KB body holds
  // tens of thousands of empty arrays).
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const next = values.pop() as object;
    const depth = depths.pop() as number;
    if (depth > max) return true;
    for (const item of Object.values(next)) {
      if (item !== null && typeof item === "object") {
        values.push(item);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
