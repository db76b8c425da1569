import { keyRefusalError, leadKeyMessages } from "../../auth/program-key.ts";
import { type ApiError, badRequest, platformError } from "../../errors/api-error.ts";
import { type LeadRefusal, leadMessages } from "./decide-lead.ts";

/** The lead endpoint's one mapping of refusals to the spec's statuses, envelopes and messages (section 7). */
export function leadRefusalError(refusal: LeadRefusal, docsUrl: string): ApiError {
  switch (refusal.reason) {
    case "key":
      return keyRefusalError(refusal.refusal, leadKeyMessages, docsUrl);
    case "identifier_required":
      return badRequest(leadMessages.identifierRequired);
    case "click_id_required":
      return badRequest(leadMessages.clickIdRequired);
    case "program_mismatch":
      return platformError(403, leadMessages.keyProgramMismatch);
    case "unknown_program":
      return badRequest(leadMessages.unknownProgram);
    case "test_program_required":
      return badRequest(leadMessages.testProgramRequired);
    case "customer_not_found":
      return badRequest(leadMessages.customerNotFound);
    case "other_program":
      return badRequest(leadMessages.otherProgram);
    case "status_cannot_become_lead":
      return badRequest(`Customer status cannot be updated to lead. Current status: ${refusal.status}`);
  }
}
