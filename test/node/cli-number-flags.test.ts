import { describe, expect, it } from "vitest";
import { numberOf } from "../../cli/commands/init.ts";
import { CliError, exitCodes } from "../../cli/exit-codes.ts";

describe("the tool's number flags take decimal numbers only", () => {
  it.each([
    ["20", 20],
    ["7.5", 7.5],
    [" 30 ", 30],
    ["-1", -1],
    ["0", 0],
    ["1e3", 1000],
    [".5", 0.5],
  ])("%j is %d (the server judges the value)", (typed, value) => {
    expect(numberOf("cookie-duration", typed)).toBe(value);
  });

  it.each(["0x10", "0b11", "0o7", "Infinity", "-Infinity", "NaN", "", " ", "1,5", "20%", "1e999"])(
    "%j is refused with the usage exit code",
    (typed) => {
      let refusal: unknown;
      try {
        numberOf("cookie-duration", typed);
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(CliError);
      expect((refusal as CliError).message).toBe(`--cookie-duration must be a number (got "${typed}")`);
      expect((refusal as CliError).exitCode).toBe(exitCodes.usage);
    },
  );

  it("an absent flag stays absent", () => {
    expect(numberOf("duration-months", undefined)).toBeUndefined();
  });
});
