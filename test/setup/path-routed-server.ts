import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request as the server saw it. */
export interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}
export type Handler = (request: Recorded, res: ServerResponse) => void;

export interface PathRoutedServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Answers the requests whose first path segment is `name` (anything else: 404). */
  handle(name: string, handler: Handler): void;
  /** What reached `name`'s paths so far. */
  requests(name: string): Recorded[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 for tests that need a misbehaving issuer or key set: each test takes a first
 * path segment of its own (so per-isolate caches keyed by URL never mix tests), answers it with its handler,
 * and reads back what was requested there.
 */
export async function startPathRoutedServer(): Promise<PathRoutedServer> {
  const handlers = new Map<string, Handler>();
  const requests = new Map<string, Recorded[]>();
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const name = path.split("/")[1] ?? "";
    const recorded = { method: req.method ?? "", path, headers: req.headers, body };
    requests.set(name, [...(requests.get(name) ?? []), recorded]);
    const handler = handlers.get(name);
    if (handler) handler(recorded, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    handle: (name, handler) => handlers.set(name, handler),
    requests: (name) => requests.get(name) ?? [],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
}
