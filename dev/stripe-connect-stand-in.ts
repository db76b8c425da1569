import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A small local stand-in of the payments provider's Connect OAuth token endpoint (`POST /oauth/token`), for
 * tests and offline use: the worker's token exchange reaches it through the `STRIPE_API_*` host/port/protocol
 * settings, so the real exchange code path runs. A code `ac_<suffix>` (letters and digits) is answered with the
 * connected account `acct_<suffix>`; any other code with the provider's `invalid_grant` error. The platform
 * key must be the one the stand-in was started with.
 */
export interface ConnectStandIn {
  host: string;
  port: number;
  close(): Promise<void>;
}

export async function startConnectStandIn(options: {
  secretKey: string;
  port?: number;
}): Promise<ConnectStandIn> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const answer = (status: number, body: object) => {
        response.writeHead(status, { "Content-Type": "application/json" });
        response.end(JSON.stringify(body));
      };
      if (request.method !== "POST" || request.url !== "/oauth/token") {
        return answer(404, { error: { type: "invalid_request_error", message: "Unrecognized request URL" } });
      }
      if (request.headers.authorization !== `Bearer ${options.secretKey}`) {
        return answer(401, { error: "invalid_client", error_description: "Invalid API Key provided" });
      }
      const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
      const code = form.get("code") ?? "";
      const match = /^ac_([A-Za-z0-9]{1,64})$/.exec(code);
      if (form.get("grant_type") !== "authorization_code" || !match) {
        return answer(400, {
          error: "invalid_grant",
          error_description: `Authorization code does not exist: ${code}`,
        });
      }
      answer(200, {
        access_token: `sk_test_connected_${match[1]}`,
        livemode: false,
        refresh_token: `rt_${match[1]}`,
        token_type: "bearer",
        stripe_publishable_key: `pk_test_${match[1]}`,
        stripe_user_id: `acct_${match[1]}`,
        scope: "read_write",
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: "127.0.0.1",
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
