/** The largest id of an `integer` (int4) column: a larger id names no row, and Postgres refuses it as a parameter. */
export const maxDatabaseId = 2 ** 31 - 1;
