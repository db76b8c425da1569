/**
 * How the Authorization header looked. The spec words a different 401 for each shape (absent or not
 * Bearer; Bearer with an empty token; a token that matches nothing), and the lead endpoint falls back to
 * browser mode for the first two.
 */
export type BearerHeader =
  | { kind: "absent" }
  | { kind: "malformed" }
  | { kind: "empty" }
  | { kind: "token"; token: string };

export function parseBearer(header: string | undefined): BearerHeader {
  // An empty header value is what a client that "sends no token" often produces: treat it as absent.
  if (header === undefined || header.trim() === "") return { kind: "absent" };
  const match = /^Bearer(?:\s+(.*))?$/i.exec(header.trim());
  if (!match) return { kind: "malformed" };
  const token = (match[1] ?? "").trim();
  return token ? { kind: "token", token } : { kind: "empty" };
}

export function bearerToken(header: string | undefined): string | undefined {
  const parsed = parseBearer(header);
  return parsed.kind === "token" ? parsed.token : undefined;
}
