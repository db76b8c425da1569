/**
 * A real OpenID Connect provider for local use and tests (`oidc-provider`, certified), bound to 127.0.0.1.
 * Dev and tests only: nothing in `functions/` or `lib/` imports it, so it never reaches a worker's bundle.
 *
 * Its sign-in page asks for an email and whether the provider should call it verified: that is how a
 * person (or a test) plays any user, including one whose provider email is unverified. The page lists the
 * seeded demo users as shortcuts. Consent is skipped: the registered clients are this service's own.
 *
 * Run alone: `tsx dev/oidc-provider.ts` (OIDC_PORT, default 8790).
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider, { type ClientMetadata, type KoaContextWithOIDC } from "oidc-provider";

export const DEFAULT_OIDC_PORT = 8790;

/** The service's confidential client (dashboard sign-in: code flow with PKCE, secret at the token endpoint). */
export const DASHBOARD_CLIENT_ID = "affiliate-dashboard";
export const DASHBOARD_CLIENT_SECRET = "dev-dashboard-secret-not-for-production-0123456789";
/** The command-line tool's public client (PKCE, loopback redirect: any port on 127.0.0.1, RFC 8252). */
export const CLI_CLIENT_ID = "affiliate-cli";

export interface DemoIdentity {
  email: string;
  verified: boolean;
  /** What the person is in the demo (shown on the sign-in page). */
  label: string;
}

export interface OidcProviderOptions {
  /** 0 picks a free port. */
  port?: number;
  /**
   * Where the dashboard client may be sent back to (the service's sign-in callback URLs). Besides these,
   * any loopback `http://127.0.0.1:<port>/api/v1/auth/callback` (or localhost) is accepted, so a local
   * stack on a port picked at start needs no registration.
   */
  dashboardRedirectUris?: string[];
  demoIdentities?: DemoIdentity[];
}

export interface RunningOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  cliClientId: string;
  close(): Promise<void>;
}

interface Identity {
  email: string;
  verified: boolean;
}

export const SIGN_IN_CALLBACK_PATH = "/api/v1/auth/callback";

function isLoopbackCallback(uri: string): boolean {
  try {
    const url = new URL(uri);
    return (
      url.protocol === "http:" &&
      (url.hostname === "127.0.0.1" || url.hostname === "localhost") &&
      url.pathname === SIGN_IN_CALLBACK_PATH &&
      url.search === "" &&
      url.hash === ""
    );
  } catch {
    return false;
  }
}

/** A stable subject per email, as a real provider keeps one per account. */
function subjectOf(email: string): string {
  return `user-${createHash("sha256").update(email.trim().toLowerCase()).digest("hex").slice(0, 24)}`;
}

export async function startOidcProvider(options: OidcProviderOptions): Promise<RunningOidcProvider> {
  const identities = new Map<string, Identity>();
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? DEFAULT_OIDC_PORT, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;

  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = {
    ...(await exportJWK(privateKey)),
    kid: randomBytes(8).toString("hex"),
    use: "sig",
    alg: "RS256",
  };

  const clients: ClientMetadata[] = [
    {
      client_id: DASHBOARD_CLIENT_ID,
      client_secret: DASHBOARD_CLIENT_SECRET,
      redirect_uris: options.dashboardRedirectUris ?? [`http://127.0.0.1:8787${SIGN_IN_CALLBACK_PATH}`],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
    {
      client_id: CLI_CLIENT_ID,
      application_type: "native",
      redirect_uris: ["http://127.0.0.1/callback"],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    },
  ];

  const provider = new Provider(issuer, {
    clients,
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    // Put the email claims in the ID token of the code flow too: the service reads them from there.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    ttl: {
      Session: 600,
      Interaction: 600,
      Grant: 600,
      AccessToken: 600,
      IdToken: 600,
      AuthorizationCode: 60,
    },
    interactions: { url: (_ctx: KoaContextWithOIDC, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: KoaContextWithOIDC, sub: string) {
      const identity = identities.get(sub);
      if (!identity) return undefined;
      return {
        accountId: sub,
        async claims() {
          return { sub, email: identity.email, email_verified: identity.verified };
        },
      };
    },
    // First-party clients: grant the requested scopes without a consent screen.
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const oidc = ctx.oidc;
      const session = oidc.session;
      const client = oidc.client;
      if (!session?.accountId || !client) return undefined;
      const grant = new oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope("openid email");
      await grant.save();
      return grant;
    },
  });
  // The documented way to widen redirect URI matching: for the dashboard client, any loopback port.
  const registeredOnly = provider.Client.prototype.redirectUriAllowed;
  provider.Client.prototype.redirectUriAllowed = function (
    this: InstanceType<typeof provider.Client>,
    uri: string,
  ) {
    if (this.clientId === DASHBOARD_CLIENT_ID && isLoopbackCallback(uri)) return true;
    return registeredOnly.call(this, uri);
  };
  const providerCallback = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, action: string) {
    if (req.method === "GET" && action === "") {
      const details = await provider.interactionDetails(req, res);
      if (details.uid !== uid) return send(res, 400, "text/plain", "Interaction mismatch");
      if (details.prompt.name === "consent") {
        // Native clients are asked for consent on every sign-in (RFC 8252 advice); ours are first-party.
        const grant = new provider.Grant({
          clientId: String(details.params.client_id),
          accountId: details.session?.accountId ?? "",
        });
        grant.addOIDCScope("openid email");
        const grantId = await grant.save();
        return provider.interactionFinished(
          req,
          res,
          { consent: { grantId } },
          { mergeWithLastSubmission: true },
        );
      }
      return send(res, 200, "text/html; charset=utf-8", signInPage(uid, options.demoIdentities ?? []));
    }
    if (req.method === "POST" && action === "/login") {
      const form = new URLSearchParams(await readBody(req));
      const email = (form.get("email") ?? "").trim();
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) return send(res, 400, "text/plain", "Type an email address");
      const sub = subjectOf(email);
      identities.set(sub, { email, verified: form.get("verified") === "yes" });
      // Redirects (303) back to the authorization endpoint, which then redirects to the client.
      return provider.interactionFinished(
        req,
        res,
        { login: { accountId: sub } },
        { mergeWithLastSubmission: false },
      );
    }
    return send(res, 404, "text/plain", "Not found");
  }

  server.on("request", (req, res) => {
    const match = /^\/interaction\/([A-Za-z0-9_-]+)(\/login)?$/.exec(
      new URL(req.url ?? "/", issuer).pathname,
    );
    if (!match) return void providerCallback(req, res);
    interaction(req, res, match[1] ?? "", match[2] ?? "").catch((err: unknown) => {
      if (!res.headersSent) send(res, 400, "text/plain", `Sign-in failed: ${(err as Error).name}`);
    });
  });

  return {
    issuer,
    clientId: DASHBOARD_CLIENT_ID,
    clientSecret: DASHBOARD_CLIENT_SECRET,
    cliClientId: CLI_CLIENT_ID,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
  res.end(body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 16_384) throw new Error("form too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function signInPage(uid: string, demo: DemoIdentity[]): string {
  const action = `/interaction/${encodeURIComponent(uid)}/login`;
  const shortcuts = demo
    .map(
      (d) => `<li><form method="post" action="${action}">
  <input type="hidden" name="email" value="${escapeHtml(d.email)}">
  ${d.verified ? '<input type="hidden" name="verified" value="yes">' : ""}
  <button type="submit">${escapeHtml(d.email)}</button> ${escapeHtml(d.label)}${d.verified ? "" : " (email not verified)"}
</form></li>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Local sign-in</title>
<style>body{font:16px system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:.8rem 0}</style>
</head><body>
<h1>Local OpenID provider</h1>
<p>Development only. Sign in as anyone: type an email and choose whether this provider vouches for it.</p>
<form method="post" action="${action}">
  <label>Email <input type="email" name="email" required autofocus></label>
  <label><input type="checkbox" name="verified" value="yes" checked> The email is verified</label>
  <button type="submit">Sign in</button>
</form>
${demo.length > 0 ? `<h2>Demo users</h2><ul>${shortcuts}</ul>` : ""}
</body></html>`;
}

// `tsx dev/oidc-provider.ts`: the provider alone, for trying the sign-in page.
if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.env.OIDC_PORT ?? DEFAULT_OIDC_PORT);
  const running = await startOidcProvider({ port });
  console.log(`OpenID provider: ${running.issuer}/.well-known/openid-configuration`);
}
