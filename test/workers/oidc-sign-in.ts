/**
 * Signs in at the local OpenID provider (dev/oidc-provider.ts) the way a browser would: follow the
 * authorization request to the provider's sign-in page, submit an email and the "verified" choice, follow
 * the redirects back to the client. Only `fetch`, so it runs in workerd (the workers tests) and in Node.
 * No token is made by hand: the provider issues and signs every one.
 */

/** The workers under test answer at https://api.test (SELF.fetch); the provider knows this callback. */
export const TEST_SIGN_IN_CALLBACK = "https://api.test/api/v1/auth/callback";

export interface ProviderIdentity {
  email: string;
  verified: boolean;
}

/** Cookies per provider origin, as a browser keeps them across the redirects. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(response: Response): void {
    const headers = response.headers as Headers & {
      getSetCookie?: () => string[];
      getAll?: (name: string) => string[];
    };
    const lines = headers.getSetCookie?.() ?? headers.getAll?.("Set-Cookie") ?? [];
    for (const line of lines) {
      const [pair] = line.split(";");
      const eq = pair?.indexOf("=") ?? -1;
      if (!pair || eq < 1) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
}

/**
 * From an authorization URL (the provider's `/auth?...`) to the URL the provider sends the browser back
 * to (the client's redirect URI with `code` and `state`, or `error`).
 */
export async function signInAtProvider(authorizationUrl: string, identity: ProviderIdentity): Promise<URL> {
  const providerOrigin = new URL(authorizationUrl).origin;
  const jar = new CookieJar();
  let url = authorizationUrl;
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(url, { redirect: "manual", headers: { Cookie: jar.header() } });
    jar.take(response);
    await response.body?.cancel();
    const location = response.headers.get("Location");
    if (response.status === 200 && /\/interaction\/[^/]+$/.test(new URL(url).pathname)) {
      // The sign-in page: submit the form.
      const form = new URLSearchParams({ email: identity.email });
      if (identity.verified) form.set("verified", "yes");
      const submitted = await fetch(`${url}/login`, {
        method: "POST",
        redirect: "manual",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: jar.header() },
        body: form.toString(),
      });
      jar.take(submitted);
      await submitted.body?.cancel();
      const next = submitted.headers.get("Location");
      if (!next) throw new Error(`sign-in form answered ${submitted.status} without a redirect`);
      url = new URL(next, url).toString();
      continue;
    }
    if (!location) throw new Error(`provider answered ${response.status} at ${new URL(url).pathname}`);
    const target = new URL(location, url);
    if (target.origin !== providerOrigin) return target;
    url = target.toString();
  }
  throw new Error("too many redirects at the provider");
}

function base64Url(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export interface IdTokenRequest {
  issuer: string;
  clientId: string;
  /** Confidential clients only; the command-line client is public. */
  clientSecret?: string;
  redirectUri: string;
  nonce?: string;
}

/** Runs the whole code flow (PKCE) as a client would and returns the provider's signed ID token. */
export async function obtainIdToken(request: IdTokenRequest, identity: ProviderIdentity): Promise<string> {
  const verifier = base64Url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64Url(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
  );
  const state = base64Url(crypto.getRandomValues(new Uint8Array(16)));
  const auth = new URL(`${request.issuer}/auth`);
  auth.search = new URLSearchParams({
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    response_type: "code",
    scope: "openid email",
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...(request.nonce ? { nonce: request.nonce } : {}),
  }).toString();
  const back = await signInAtProvider(auth.toString(), identity);
  const code = back.searchParams.get("code");
  if (!code || back.searchParams.get("state") !== state) {
    throw new Error(`provider sent back no code: ${back.searchParams.get("error") ?? "state mismatch"}`);
  }
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded" };
  const body = new URLSearchParams({
    grant_type: "authorization_code",
    code,
    redirect_uri: request.redirectUri,
    code_verifier: verifier,
  });
  if (request.clientSecret) {
    headers.Authorization = `Basic ${btoa(`${encodeURIComponent(request.clientId)}:${encodeURIComponent(request.clientSecret)}`)}`;
  } else {
    body.set("client_id", request.clientId);
  }
  const response = await fetch(`${request.issuer}/token`, { method: "POST", headers, body: body.toString() });
  const tokens = (await response.json()) as { id_token?: string; error?: string };
  if (!tokens.id_token) throw new Error(`token endpoint answered ${response.status}: ${tokens.error}`);
  return tokens.id_token;
}
