import type { CompleteLoginForPersonResult } from "./complete-login.ts";

/**
 * The page a person sees after signing in for a command-line login. Its only dynamic text is the short code
 * (`ABCD-EFGH`, letters from a fixed alphabet), so nothing needs escaping.
 */
export function loginResultPage(result: CompleteLoginForPersonResult): string {
  const message =
    result.outcome === "completed"
      ? `<h1>You are signed in</h1><p>Return to your terminal: the command-line tool showing the code <strong>${result.userCode}</strong> is now signed in. You can close this tab.</p>`
      : "<h1>This login link expired or was already used</h1><p>Run <code>affiliate-tracking-service login</code> again to get a new link.</p>";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Command-line sign-in</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style></head><body>${message}</body></html>`;
}
