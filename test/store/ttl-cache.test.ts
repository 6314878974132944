import { describe, expect, it } from 'vitest';
import { TtlCache } from '../../functions/shared/store/ttl-cache';

describe('TtlCache', () => {
  it('forgets entries after their TTL', () => {
    let now = 1_000;
    const cache = new TtlCache<string, number>({ ttlMs: 100, maxEntries: 10, now: () => now });
    cache.set('a', 1);
    cache.set('b', 2, 500);
    now += 99;
    expect(cache.get('a')).toBe(1);
    now += 1;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBe(2);
  });

  it('drops the oldest entry when full, so memory stays bounded', () => {
    const cache = new TtlCache<number, number>({ ttlMs: 1_000, maxEntries: 3 });
    for (let i = 0; i < 10; i++) cache.set(i, i);
    expect(cache.size).toBe(3);
    expect(cache.get(6)).toBeUndefined();
    expect([cache.get(7), cache.get(8), cache.get(9)]).toEqual([7, 8, 9]);
  });

  it('updates a value without extending its life, and stores nothing with TTL 0', () => {
    let now = 0;
    const cache = new TtlCache<string, number>({ ttlMs: 100, maxEntries: 10, now: () => now });
    cache.set('a', 1);
    now = 90;
    cache.update('a', (v) => v + 1);
    expect(cache.get('a')).toBe(2);
    now = 100;
    expect(cache.get('a')).toBeUndefined();
    cache.update('a', () => 5);
    expect(cache.get('a')).toBeUndefined();
    cache.set('z', 1, 0);
    expect(cache.get('z')).toBeUndefined();
  });
});
