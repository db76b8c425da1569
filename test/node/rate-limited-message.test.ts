import { describe, expect, it } from "vitest";
import { rateLimitedMessage } from "../../lib/http/rate-limit.ts";

describe("the 429's message", () => {
  it.each([
    [1, "Too many requests. Retry after 1 second."],
    [2, "Too many requests. Retry after 2 seconds."],
    [60, "Too many requests. Retry after 60 seconds."],
  ])("for a wait of %i s", (seconds, message) => {
    expect(rateLimitedMessage(seconds)).toBe(message);
  });
});
