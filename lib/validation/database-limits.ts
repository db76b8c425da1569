/** The largest id of an `integer` (int4) column: a larger id names no row, and Postgres refuses it as a parameter. */
export const maxDatabaseId = 2 ** 31 - 1;

/**
 * A program id as sent, for a body whose `program_id` is compared with other programs (a click's, a key's):
 * one beyond the `integer` ids names no program, so it becomes 0, which no row has (serial ids start at 1),
 * and is then refused, or found to differ, as any other program's id is, without reaching Postgres as is.
 */
export function comparableProgramId(id: number | null | undefined): number | null {
  if (id === undefined || id === null) return null;
  return id > maxDatabaseId ? 0 : id;
}
