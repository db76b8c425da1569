import { eq } from "drizzle-orm";
import { programs } from "../../../schema/programs.ts";
import type { Database } from "../../db/client.ts";
import { badRequest } from "../../errors/api-error.ts";
import { originAllowed } from "../../http/origins.ts";
import type { TrackerConfig } from "./config-request.ts";

/** A program's public tracker settings, judged for `origin`: one database round trip. */
export async function readTrackerConfig(
  db: Database,
  programId: number,
  origin: string | undefined,
): Promise<TrackerConfig> {
  // Program ids are 32-bit: a larger number names no program (and must not reach an int comparison).
  if (programId > 2_147_483_647) throw badRequest("Unknown program_id");
  const [program] = await db
    .select({
      id: programs.id,
      attributionWindowDays: programs.attributionWindowDays,
      leadAuthPolicy: programs.leadAuthPolicy,
      allowedOrigins: programs.allowedOrigins,
    })
    .from(programs)
    .where(eq(programs.id, programId));
  if (!program) throw badRequest("Unknown program_id");
  return {
    success: true,
    program_id: program.id,
    cookie_window_days: program.attributionWindowDays,
    lead_capture_mode: program.leadAuthPolicy,
    origin_allowed: origin ? originAllowed(origin, program.allowedOrigins) : false,
  };
}
