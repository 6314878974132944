/**
 * A small per-container cache: entries expire after a TTL and the oldest entry is dropped when the
 * cache is full, so a long-lived warm Lambda cannot grow without bound.
 */

/** Construction options; times in ms. */
export interface TtlCacheOptions {
  /** Default lifetime of an entry, ms. 0 disables caching. */
  ttlMs: number;
  /** Most entries kept; inserting beyond it evicts the oldest. */
  maxEntries: number;
  /** Clock, ms since epoch (tests pass a fake one). */
  now?: () => number;
}

/** A `Map` whose entries expire. Not shared between containers. */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();
  private readonly now: () => number;

  constructor(private readonly opts: TtlCacheOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The live value for `key`, or `undefined` when absent or expired. */
  get(key: K): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  /** Stores `value` for `ttlMs` (default: the cache's TTL). A TTL ≤ 0 stores nothing. */
  set(key: K, value: V, ttlMs: number = this.opts.ttlMs): void {
    this.entries.delete(key); // re-insert so Map order stays oldest-first
    if (ttlMs <= 0 || this.opts.maxEntries <= 0) return;
    while (this.entries.size >= this.opts.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }

  /** Changes a live entry's value without extending its life; no-op when absent or expired. */
  update(key: K, fn: (value: V) => V): void {
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > this.now()) hit.value = fn(hit.value);
  }

  /** Forgets `key`. */
  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Forgets everything. */
  clear(): void {
    this.entries.clear();
  }

  /** Number of stored entries, expired ones included until touched. */
  get size(): number {
    return this.entries.size;
  }
}
