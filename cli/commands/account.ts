import { callApi } from "../api-client.ts";
import { forgetLogin, loadLogin, masked } from "../credentials-store.ts";
import { emit, type GlobalOptions } from "../output.ts";
import { requireLogin } from "../session.ts";

/** Revokes the login token on the server, then forgets it locally (even when the server call fails). */
export async function logout(options: GlobalOptions): Promise<void> {
  const login = await loadLogin(options.baseUrl);
  if (login) {
    try {
      await callApi(options.baseUrl, "POST", "/api/v1/cli/auth/logout", { token: login.token });
    } finally {
      await forgetLogin(options.baseUrl);
    }
  }
  emit(options, { ok: true, logged_out: Boolean(login) }, () =>
    process.stdout.write(
      login ? `Logged out of ${options.baseUrl}.\n` : `Not logged in to ${options.baseUrl}.\n`,
    ),
  );
}

/** Who the stored token belongs to, checked against the server (an expired or revoked token fails with 3). */
export async function whoami(options: GlobalOptions): Promise<void> {
  const login = await requireLogin(options.baseUrl);
  const { data } = await callApi<{ programs: unknown[] }>(options.baseUrl, "GET", "/api/v1/cli/programs", {
    token: login.token,
  });
  const json = {
    ok: true,
    email: login.email,
    base_url: options.baseUrl,
    token: masked(login.token),
    expires_at: login.expires_at,
    programs: data.programs.length,
  };
  emit(options, json, () =>
    process.stdout.write(
      `${login.email} on ${options.baseUrl} (token ${masked(login.token)}, expires ${login.expires_at}); ${data.programs.length} program(s).\n`,
    ),
  );
}
