import { type ApiError, badRequest } from "../../errors/api-error.ts";
import type { VisitRefusal } from "./decide-visit.ts";

/** The visit endpoint's one mapping of refusals to the platform envelope's status and message. */
export function visitRefusalError(refusal: VisitRefusal): ApiError {
  switch (refusal) {
    case "unknown_click":
      return badRequest("Unknown click_id");
  }
}
