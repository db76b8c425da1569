import { SELF } from "cloudflare:test";
import { freshIp } from "./harness.ts";
import { type ProviderIdentity, signInAtProvider } from "./oidc-sign-in.ts";

export const BASE = "https://api.test";

/** Cookies of the service (name -> value) from a response's Set-Cookie lines. */
export function setCookies(response: Response): Map<string, string> {
  const headers = response.headers as Headers & {
    getSetCookie?: () => string[];
    getAll?: (n: string) => string[];
  };
  const lines = headers.getSetCookie?.() ?? headers.getAll?.("Set-Cookie") ?? [];
  const cookies = new Map<string, string>();
  for (const line of lines) {
    const [pair] = line.split(";");
    const eq = pair?.indexOf("=") ?? -1;
    if (pair && eq > 0) cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return cookies;
}

export interface SignedIn {
  /** The `__Host-affiliate_session` cookie value (the sign-in token the page carries). */
  cookie: string;
  /** The raw Set-Cookie line of the session cookie, to check its attributes. */
  response: Response;
}

/**
 * The dashboard sign-in as a browser runs it: the service's start route, the local provider's page, the
 * service's callback with the state cookie. Returns the callback's response (303 or a refusal).
 */
export async function dashboardSignIn(
  identity: ProviderIdentity,
  /** Extra headers of the provider's redirect back (a browser's `Accept`). */
  headers: Record<string, string> = {},
): Promise<Response> {
  const ip = freshIp();
  const start = await SELF.fetch(`${BASE}/api/v1/auth/sign-in`, {
    redirect: "manual",
    headers: { "CF-Connecting-IP": ip },
  });
  if (start.status !== 302) throw new Error(`sign-in start answered ${start.status}: ${await start.text()}`);
  const stateCookie = setCookies(start).get("__Host-affiliate_sign_in_state") ?? "";
  const back = await signInAtProvider(start.headers.get("Location") ?? "", identity);
  return SELF.fetch(back.href, {
    redirect: "manual",
    headers: { Cookie: `__Host-affiliate_sign_in_state=${stateCookie}`, "CF-Connecting-IP": ip, ...headers },
  });
}

/** Signs in and returns the session cookie value (the dashboard sign-in token). */
export async function signedInCookie(identity: ProviderIdentity): Promise<string> {
  const response = await dashboardSignIn(identity);
  const token = setCookies(response).get("__Host-affiliate_session");
  if (response.status !== 303 || !token)
    throw new Error(`sign-in answered ${response.status}: ${await response.text()}`);
  return token;
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions.
export type LooseJson = any;

export async function call(
  method: string,
  path: string,
  options: {
    token?: string;
    cookie?: string;
    origin?: string;
    body?: unknown;
    headers?: Record<string, string>;
  } = {},
): Promise<{
  status: number;
  body: LooseJson;
  headers: Headers;
}> {
  const headers: Record<string, string> = { "CF-Connecting-IP": freshIp(), ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.cookie) headers.Cookie = `__Host-affiliate_session=${options.cookie}`;
  if (options.origin) headers.Origin = options.origin;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const response = await SELF.fetch(`${BASE}${path}`, {
    method,
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    redirect: "manual",
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
}
