import { type ApiError, badRequest, platformError, typedError } from "../../errors/api-error.ts";
import type { ClickRefusal } from "./decide-click.ts";

/** The click endpoint's one mapping of refusals to the spec's statuses, envelopes and messages. */
export function clickRefusalError(refusal: ClickRefusal): ApiError {
  switch (refusal) {
    case "program_mismatch":
      return platformError(403, "program_id does not match the API key");
    case "unknown_program":
      return badRequest("Unknown program_id");
    case "link_not_found":
      return badRequest("Referral link not found");
    case "link_misconfigured":
      return badRequest("Invalid referral link configuration");
    case "link_disabled": {
      // The typed envelope that also keeps top-level `success: false`, `message` and `hint` (spec section 4).
      const message = "This referral link has been disabled";
      const hint = "The partner or the brand turned this link off. Ask the partner for an active link.";
      return typedError(410, "link_disabled", message, { hint }, { success: false, message, hint });
    }
  }
}
