import { sql } from "drizzle-orm";
import { programApiKeys } from "../../schema/programs.ts";
import type { KeyMessages } from "../auth/program-key.ts";

/** Spec section 7, `status` and `test-event`: the platform envelope, with these words. */
export const cliKeyMessages: KeyMessages = {
  missing: "Missing or malformed Authorization header. Expected: Bearer <api_token>",
  empty: "Missing API token",
  invalid:
    "Invalid API key. Check the key in your project config; a workspace owner can regenerate it in the program settings.",
  envelope: "platform",
};

/** The program of a Bearer key, as a subquery a read batch can use before the key is evaluated. */
export function programOfKey(keyHash: string) {
  return sql`(select ${programApiKeys.programId} from ${programApiKeys}
              where ${programApiKeys.keyHash} = ${keyHash}::text and ${programApiKeys.revokedAt} is null)`;
}
