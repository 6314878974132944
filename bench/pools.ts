/**
 * Keep-alive connection pools of the load generator: one undici Pool per (origin, connection count),
 * reused across rounds so every measured request runs on an established connection.
 */
import { Pool } from 'undici';

/** Pools by origin and size; `closeAll` when done. */
export class Pools {
  private readonly pools = new Map<string, Pool>();

  /** The pool of `connections` keep-alive connections to `origin` (created on first use). */
  get(origin: string, connections: number): Pool {
    const key = `${origin}#${connections}`;
    let pool = this.pools.get(key);
    if (pool === undefined) {
      pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** Closes every pool (destroys, if a close takes longer than 2 s). */
  async closeAll(): Promise<void> {
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(
      all.map(async (pool) => {
        const timer = setTimeout(() => void pool.destroy(), 2_000);
        await pool.close().catch(() => undefined);
        clearTimeout(timer);
      }),
    );
  }
}
