import { z } from "@hono/zod-openapi";
import { maxDatabaseId } from "../../validation/database-limits.ts";
import { hasControlCharacter } from "../../validation/storable-text.ts";

const maxUrlLength = 2048;

/**
 * The last URL asked and its code: a click's validation and its route both ask for the same URL's code, and
 * parsing it twice showed as about 40 µs of worker CPU per click (`npm run bench:profile -- click`). The
 * answer depends on the URL alone, so one isolate's concurrent requests may share it.
 */
let lastAsked: { affiliateUrl: string; code: string | null | undefined } | undefined;

/**
 * The referral code of an affiliate URL: the `aff` parameter, else `via`. Returns `undefined` when the URL
 * is not a fully qualified http(s) URL, and `null` when it carries neither parameter.
 */
export function referralCodeOf(affiliateUrl: string): string | null | undefined {
  if (lastAsked?.affiliateUrl === affiliateUrl) return lastAsked.code;
  const code = parseReferralCode(affiliateUrl);
  lastAsked = { affiliateUrl, code };
  return code;
}

function parseReferralCode(affiliateUrl: string): string | null | undefined {
  if (affiliateUrl.length > maxUrlLength) return undefined;
  let url: URL;
  try {
    url = new URL(affiliateUrl);
  } catch {
    return undefined;
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname) return undefined;
  const code = url.searchParams.get("aff")?.trim() || url.searchParams.get("via")?.trim();
  // A percent-encoded control character (`%00`) decodes into the code; no link can have such a code.
  if (code && hasControlCharacter(code)) return undefined;
  return code || null;
}

const programIdField = z
  .number({ error: "Unknown program_id" })
  .int({ error: "Unknown program_id" })
  .positive({ error: "Unknown program_id" });

/** Field order is check order: the first failing field's message is the answer. */
export const ClickRequestSchema = z
  .object(
    {
      affiliate_url: z
        .string({
          error: (issue) =>
            issue.input === undefined || issue.input === null
              ? "affiliate_url is required"
              : "Invalid affiliate_url",
        })
        .superRefine((value, ctx) => {
          if (value.trim() === "") {
            ctx.addIssue({ code: "custom", message: "affiliate_url is required" });
            return;
          }
          const code = referralCodeOf(value.trim());
          if (code === undefined) ctx.addIssue({ code: "custom", message: "Invalid affiliate_url" });
          else if (code === null)
            ctx.addIssue({ code: "custom", message: "No aff parameter found in affiliate_url" });
        })
        .openapi({
          description: "The landing URL the visitor opened, with the partner's `aff` (or `via`) parameter.",
          example: "https://brand.example/pricing?aff=jane",
        }),
      // Beyond the database's integer ids no program can exist: Unknown program_id at once. (The route maps
      // `additional_data.program_id` instead, so a test event's is compared with the key's program first.)
      program_id: programIdField.max(maxDatabaseId, { error: "Unknown program_id" }).nullish().openapi({
        description: "The program of the page. When sent, the link must belong to it.",
        example: 1,
      }),
      click_id: z
        .string({ error: "click_id must be a string" })
        .max(128, { error: "click_id must be at most 128 characters" })
        .nullish()
        .openapi({
          description:
            "The visitor's current `service_click_id` cookie, if any. A click through another link of the same " +
            "program is logged for that link's partner, and the response returns this original id (first click).",
          example: "clk_3q2Vb0cJ8m1o6tYkT9rX4w",
        }),
      referrer: z
        .string({ error: "referrer must be a string" })
        .max(maxUrlLength, { error: `referrer must be at most ${maxUrlLength} characters` })
        .nullish()
        .openapi({ description: "The page's `document.referrer`, stored for reporting." }),
      additional_data: z
        .looseObject(
          {
            test_mode: z
              .boolean({ error: "additional_data.test_mode must be a boolean" })
              .nullish()
              .openapi({ description: "Record a flagged test click that affects no real state." }),
            program_id: programIdField.nullish().openapi({
              description:
                "The program of the event; with a Bearer key in test mode it must be the key's program (else 403).",
            }),
          },
          { error: "additional_data must be an object" },
        )
        .nullish(),
    },
    { error: "affiliate_url is required" },
  )
  .openapi("ClickRequest");

export type ClickRequest = z.infer<typeof ClickRequestSchema>;

export const ClickResponseSchema = z
  .object({
    success: z.literal(true),
    click_id: z.string().openapi({ description: "Keep it in the `service_click_id` cookie." }),
    cookie_window_days: z
      .number()
      .int()
      .openapi({ description: "The program's attribution window in days." }),
  })
  .openapi("ClickResponse");
