import { eq } from "drizzle-orm";
import { programApiKeys } from "../../schema/programs.ts";
import { issueApiKey } from "../auth/api-keys.ts";
import type { Database } from "../db/client.ts";

/** A verification key lives a minute at most, even if its removal never ran (an isolate killed mid-way). */
const lifetimeMs = 60_000;

export interface VerificationKey {
  token: string;
  keyHash: string;
}

/**
 * The dashboard's verifier sends its test events exactly as a brand's backend does (through the tracking
 * endpoints, with a program key), but a signed-in person has no key in hand: only hashes are stored. So each
 * run gets a key of its own: a fresh test key (`sk_test_`, never shown, never counted as the program's live
 * key), already past due for rotation a minute later, and deleted when the run ends.
 */
export async function withVerificationKey<T>(
  db: Database,
  programId: number,
  now: Date,
  run: (key: VerificationKey) => Promise<T>,
): Promise<T> {
  const issued = await issueApiKey(true);
  await db.insert(programApiKeys).values({
    programId,
    keyHash: issued.keyHash,
    keyPrefix: issued.keyPrefix,
    isTest: true,
    rotationMarkedAt: now,
    rotateBy: new Date(now.getTime() + lifetimeMs),
  });
  try {
    return await run({ token: issued.key, keyHash: issued.keyHash });
  } finally {
    await db.delete(programApiKeys).where(eq(programApiKeys.keyHash, issued.keyHash));
  }
}
