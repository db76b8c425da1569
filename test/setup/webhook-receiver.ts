import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A brand's webhook receiver for the tests, on loopback, which the workers under test reach with a real
 * outbound `fetch` (workerd reaches 127.0.0.1, as it reaches the SQL endpoint). Each test uses its own box
 * name: `POST /hooks/<box>` records the request (headers and raw body) and answers the status set for the
 * box (200 until told otherwise); `PUT /control/<box>` with `{"status":500}` sets it; `GET /log/<box>`
 * returns what the box received, oldest first.
 */
export interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
  answered: number;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

export async function startWebhookReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const received = new Map<string, ReceivedWebhook[]>();
  const statuses = new Map<string, number>();
  const server = createServer(async (request, response) => {
    const [, kind, box] = (request.url ?? "").split("/");
    const body = await readBody(request);
    if (!box) {
      response.writeHead(404).end();
      return;
    }
    if (kind === "hooks" && request.method === "POST") {
      const answered = statuses.get(box) ?? 200;
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]),
      );
      received.set(box, [...(received.get(box) ?? []), { headers, body, answered }]);
      response
        .writeHead(answered, { "content-type": "text/plain" })
        .end(answered < 300 ? "ok" : "failing on purpose");
      return;
    }
    if (kind === "control" && request.method === "PUT") {
      statuses.set(box, Number((JSON.parse(body) as { status: number }).status));
      response.writeHead(204).end();
      return;
    }
    if (kind === "log" && request.method === "GET") {
      response
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify(received.get(box) ?? []));
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
