/**
 * Origins are compared exactly, after URL normalisation (scheme, host and port): `http://localhost:3000`
 * and `http://127.0.0.1:3000` are different origins, as browsers treat them.
 */
export function normalizeOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

export function originAllowed(origin: string, allowedOrigins: readonly string[]): boolean {
  const normalized = normalizeOrigin(origin);
  if (!normalized) return false;
  return allowedOrigins.some((allowed) => normalizeOrigin(allowed) === normalized);
}
