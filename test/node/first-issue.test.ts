import { z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { BODY_NOT_AN_OBJECT, firstIssueMessage } from "../../lib/validation/first-issue.ts";

const withoutMessage = z.object({ name: z.string({ error: "name must be a string" }).optional() });
const withMessage = z.object(
  { name: z.string({ error: "name must be a string" }).optional() },
  { error: "Missing required fields: name" },
);

function messageOf(schema: z.ZodType, body: unknown): string {
  const result = schema.safeParse(body);
  if (result.success) throw new Error("expected a refusal");
  return firstIssueMessage(result.error);
}

describe("firstIssueMessage", () => {
  it.each([[[]], [null], [42], ["text"]])(
    "a body %j that is not an object: ours, not the validator's",
    (body) => {
      expect(messageOf(withoutMessage, body)).toBe(BODY_NOT_AN_OBJECT);
    },
  );

  it("keeps the message a schema names for a body that is not an object", () => {
    expect(messageOf(withMessage, [])).toBe("Missing required fields: name");
  });

  it("keeps a field's own message", () => {
    expect(messageOf(withoutMessage, { name: 7 })).toBe("name must be a string");
  });
});
