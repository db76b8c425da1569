import { bodyLimit } from "hono/body-limit";
import { platformError } from "../errors/api-error.ts";

/**
 * Every tracking body is a few hundred bytes; 64 KB leaves room for a generous `line_items` while a caller
 * can no longer make the worker buffer (or the database store) megabytes.
 */
export const maxRequestBodyBytes = 64 * 1024;

export function payloadTooLargeMessage(maxBytes: number): string {
  return `Request body too large (limit ${maxBytes} bytes)`;
}

/**
 * Refuses a larger body with 413 in the route's envelope before anything reads it. A declared
 * `Content-Length` is refused at once; a chunked body is counted as it streams in and refused at the first
 * byte over the limit.
 */
export function limitBody(maxBytes = maxRequestBodyBytes) {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw platformError(413, payloadTooLargeMessage(maxBytes));
    },
  });
}

/**
 * The body as text, or `null` when it is larger than `maxBytes` (for workers without Hono). Reads at most
 * `maxBytes + 1` bytes whether or not `Content-Length` is declared.
 */
export async function readTextWithin(request: Request, maxBytes: number): Promise<string | null> {
  const declared = request.headers.get("Content-Length");
  if (declared !== null && Number(declared) > maxBytes) return null;
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}
