import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { customers, leadEvents } from "../../schema/index.ts";
import { db, postJson } from "./harness.ts";

export const leadPath = "/api/v1/track/lead";

/** Records a click through the click endpoint and returns its id. */
export async function recordClick(
  link: string,
  options: { visitorClickId?: string; testMode?: boolean } = {},
): Promise<string> {
  const response = await postJson("/api/v1/track/click", {
    affiliate_url: `https://shop.example/?aff=${link}`,
    ...(options.visitorClickId ? { click_id: options.visitorClickId } : {}),
    ...(options.testMode ? { additional_data: { test_mode: true } } : {}),
  });
  expect(response.status).toBe(200);
  return response.body.click_id as string;
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

export async function leadEventsOfProgram(programId: number) {
  return db.select().from(leadEvents).where(eq(leadEvents.programId, programId)).orderBy(leadEvents.id);
}

export async function customersOfProgram(programId: number) {
  return db.select().from(customers).where(eq(customers.programId, programId)).orderBy(customers.id);
}
