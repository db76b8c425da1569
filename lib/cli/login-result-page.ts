import {
  ACCOUNT_BLOCKED_MESSAGE,
  EMAIL_NOT_VERIFIED_MESSAGE,
  type PersonRefusal,
} from "../identity/identity-errors.ts";
import type { CompleteLoginForPersonResult } from "./complete-login.ts";

/**
 * The page a person sees after signing in for a command-line login: the code to approve, signed in, the link no
 * longer usable, or the person refused (the same words the sign-in's 403 has). Its only dynamic text is the
 * short code (`ABCD-EFGH`, letters from a fixed alphabet), a fixed path and fixed messages, so nothing needs
 * escaping.
 */
export function loginResultPage(
  result:
    | CompleteLoginForPersonResult
    /** Signed in; the login waits for the person to approve its code (a form posting to `approveAction`). */
    | { outcome: "awaiting_approval"; userCode: string; approveAction: string }
    /** `loginEnded`: the login session was open and now ends refused (its poll says why). */
    | { outcome: "refused"; reason: PersonRefusal; loginEnded: boolean },
): string {
  const again = "Run <code>affiliate-tracking-service login</code> again to get a new link.";
  const message =
    result.outcome === "awaiting_approval"
      ? `<h1>Approve the command-line sign-in?</h1><p>The command-line tool asking to sign in as you shows the code <strong>${result.userCode}</strong>.</p><p>Approve only if you ran <code>affiliate-tracking-service login</code> yourself and your terminal shows this code. Someone who sent you this link would get access to your workspace. If you did not start it, close this tab.</p><form method="post" action="${result.approveAction}"><input type="hidden" name="code" value="${result.userCode}"><button type="submit">Approve ${result.userCode}</button></form>`
      : result.outcome === "completed"
        ? `<h1>You are signed in</h1><p>Return to your terminal: the command-line tool showing the code <strong>${result.userCode}</strong> is now signed in. You can close this tab.</p>`
        : result.reason === "account_blocked" || result.reason === "email_not_verified"
          ? `<h1>Sign-in refused</h1><p>${result.reason === "account_blocked" ? ACCOUNT_BLOCKED_MESSAGE : EMAIL_NOT_VERIFIED_MESSAGE}</p><p>${result.loginEnded ? "The command-line tool stops waiting and says the same. " : ""}${again}</p>`
          : result.reason === "code_mismatch"
            ? `<h1>Nothing was approved</h1><p>The login waiting in this browser is no longer the one this page showed: another login link was opened meanwhile. ${again}</p>`
            : `<h1>This login link expired or was already used</h1><p>${again}</p>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Command-line sign-in</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style></head><body>${message}</body></html>`;
}
