/**
 * The hashes of the keys and sign-in tokens that authenticated in this isolate, most recent last, at most
 * `capacity` of them. A token not known here (a made-up one, or a real key's first request) is refused when its
 * address has sent too many tokens that did not authenticate (`count-request.ts`), so random tokens buy no
 * allowance without end.
 */
export class KnownKeys {
  private readonly hashes = new Set<string>();

  constructor(private readonly capacity = 10_000) {}

  has(hash: string): boolean {
    return this.hashes.has(hash);
  }

  remember(hash: string): void {
    // Re-inserting moves the hash to the end, so the first in iteration order is the least recently used.
    this.hashes.delete(hash);
    this.hashes.add(hash);
    if (this.hashes.size > this.capacity) {
      const oldest = this.hashes.values().next().value;
      if (oldest !== undefined) this.hashes.delete(oldest);
    }
  }

  get size(): number {
    return this.hashes.size;
  }
}
