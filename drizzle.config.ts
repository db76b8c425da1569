import { defineConfig } from "drizzle-kit";

// `npm run db:generate` writes a new migration from schema/ changes; `npm run db:migrate` applies the
// checked-in migrations to the database in DATABASE_URL (production: Neon's direct connection string).
export default defineConfig({
  dialect: "postgresql",
  schema: "./schema/index.ts",
  out: "./migrations",
  dbCredentials: { url: process.env.DATABASE_URL ?? "" },
});
