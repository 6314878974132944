import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../functions/shared/routing/circuit-breaker';

/** The per-container breaker on a hand-driven clock (ms). */

function breakerAt(threshold = 3, cooldownMs = 1_000) {
  const clock = { now: 0 };
  const breaker = new CircuitBreaker({ failureThreshold: threshold, cooldownMs }, () => clock.now);
  return { breaker, clock };
}

const K = 'openai:gpt-4o';

describe('CircuitBreaker', () => {
  it('opens after the threshold of consecutive failures, not before', () => {
    const { breaker } = breakerAt(3);
    breaker.failure(K, 'server');
    breaker.failure(K, 'timeout');
    expect(breaker.isOpen(K)).toBe(false);
    expect(breaker.allow(K)).toBe(true);
    breaker.failure(K, 'connection');
    expect(breaker.isOpen(K)).toBe(true);
    expect(breaker.allow(K)).toBe(false);
  });

  it('a success in between resets the count', () => {
    const { breaker } = breakerAt(2);
    breaker.failure(K, 'server');
    breaker.success(K);
    breaker.failure(K, 'server');
    expect(breaker.isOpen(K)).toBe(false);
  });

  it('ignores failures that say nothing about the target (client errors, rate limits, context length)', () => {
    const { breaker } = breakerAt(1);
    breaker.failure(K, 'client');
    breaker.failure(K, 'rate-limit');
    breaker.failure(K, 'context-length');
    expect(breaker.isOpen(K)).toBe(false);
  });

  it('after the cooldown lets exactly one probe through; the others keep skipping until it reports', () => {
    const { breaker, clock } = breakerAt(1, 1_000);
    breaker.failure(K, 'timeout');
    clock.now = 999;
    expect(breaker.allow(K)).toBe(false);
    clock.now = 1_000;
    expect(breaker.isOpen(K)).toBe(false);
    expect(breaker.allow(K)).toBe(true); // the probe
    expect(breaker.allow(K)).toBe(false);
    expect(breaker.allow(K)).toBe(false);
  });

  it('a successful probe closes the breaker for everyone', () => {
    const { breaker, clock } = breakerAt(1, 1_000);
    breaker.failure(K, 'server');
    clock.now = 1_000;
    expect(breaker.allow(K)).toBe(true);
    breaker.success(K);
    expect(breaker.allow(K)).toBe(true);
    expect(breaker.allow(K)).toBe(true);
  });

  it('a failed probe re-opens it at once for a whole new cooldown, even under the threshold', () => {
    const { breaker, clock } = breakerAt(3, 1_000);
    for (let i = 0; i < 3; i++) breaker.failure(K, 'server');
    clock.now = 1_500;
    expect(breaker.allow(K)).toBe(true);
    breaker.failure(K, 'server');
    expect(breaker.isOpen(K)).toBe(true);
    clock.now = 2_499;
    expect(breaker.allow(K)).toBe(false);
    clock.now = 2_500;
    expect(breaker.allow(K)).toBe(true);
  });

  it('a released probe (the attempt never ran or the client left) lets the next caller probe', () => {
    const { breaker, clock } = breakerAt(1, 1_000);
    breaker.failure(K, 'server');
    clock.now = 1_000;
    expect(breaker.allow(K)).toBe(true);
    expect(breaker.allow(K)).toBe(false);
    breaker.release(K);
    expect(breaker.allow(K)).toBe(true);
  });

  it('a non-counting failure of the probe gives the probe back without re-opening', () => {
    const { breaker, clock } = breakerAt(1, 1_000);
    breaker.failure(K, 'server');
    clock.now = 1_000;
    expect(breaker.allow(K)).toBe(true);
    breaker.failure(K, 'rate-limit');
    expect(breaker.isOpen(K)).toBe(false);
    expect(breaker.allow(K)).toBe(true);
  });

  it('keeps targets apart', () => {
    const { breaker } = breakerAt(1);
    breaker.failure(K, 'server');
    expect(breaker.allow('anthropic:claude-sonnet-4-6')).toBe(true);
  });

  it("one account's content-caused 5xx opens that account's breaker only, not the target for everyone", () => {
    const { breaker } = breakerAt(3);
    const a = { accountId: 'acct-A', body: '{"n":2,"bad schema":1}' };
    for (let i = 0; i < 10; i++) breaker.failure(K, 'server', { ...a, body: `${a.body}${i}` });
    expect(breaker.isOpen(K)).toBe(false);
    expect(breaker.allow(K, 'acct-B')).toBe(true);
    expect(breaker.isOpen(K, 'acct-A')).toBe(true);
    expect(breaker.allow(K, 'acct-A')).toBe(false);
  });

  it('one body failing from many accounts stays with those accounts: content, not the target', () => {
    const { breaker } = breakerAt(3);
    for (let i = 0; i < 6; i++) breaker.failure(K, 'overloaded', { accountId: `acct-${i}`, body: 'the same poison' });
    expect(breaker.isOpen(K)).toBe(false);
    expect(breaker.allow(K, 'acct-other')).toBe(true);
  });

  it('a real outage, 5xx on different bodies from three accounts in a row, opens it for everyone; a success in between does not', () => {
    const { breaker } = breakerAt(3);
    breaker.failure(K, 'server', { accountId: 'a', body: '1' });
    breaker.failure(K, 'server', { accountId: 'b', body: '2' });
    breaker.success(K, 'd');
    breaker.failure(K, 'server', { accountId: 'c', body: '3' });
    expect(breaker.isOpen(K)).toBe(false);
    breaker.failure(K, 'server', { accountId: 'a', body: '4' });
    breaker.failure(K, 'server', { accountId: 'b', body: '5' });
    expect(breaker.isOpen(K)).toBe(true);
    expect(breaker.allow(K, 'someone-else')).toBe(false);
  });

  it('timeouts and connection errors are not the content: they count for everyone from one account', () => {
    const { breaker } = breakerAt(3);
    for (const kind of ['timeout', 'connection', 'timeout'] as const) breaker.failure(K, kind, { accountId: 'a', body: 'x' });
    expect(breaker.allow(K, 'b')).toBe(false);
  });

  it("a half-open probe failing on one account's content closes it again rather than re-opening it for everyone", () => {
    const { breaker, clock } = breakerAt(3, 1_000);
    for (const id of ['a', 'b', 'c']) breaker.failure(K, 'server', { accountId: id, body: id });
    expect(breaker.isOpen(K)).toBe(true);
    clock.now = 1_000;
    expect(breaker.allow(K, 'a')).toBe(true);
    breaker.failure(K, 'server', { accountId: 'a', body: 'poison' });
    expect(breaker.allow(K, 'b')).toBe(true);
  });

  it('N concurrent requests through one breaker: one attacker among many healthy accounts never opens it for them', async () => {
    const { breaker } = breakerAt(3);
    const request = async (accountId: string, i: number): Promise<boolean> => {
      await new Promise((r) => setImmediate(r));
      if (!breaker.allow(K, accountId)) return false;
      await new Promise((r) => setImmediate(r));
      if (accountId === 'attacker') breaker.failure(K, 'server', { accountId, body: `poison ${i}` });
      else breaker.success(K, accountId);
      return true;
    };
    const runs = Array.from({ length: 200 }, (_, i) => request(i % 4 === 0 ? 'attacker' : `tenant-${i % 7}`, i));
    const allowed = await Promise.all(runs);
    expect(allowed.filter((ok, i) => i % 4 !== 0 && !ok)).toEqual([]);
    expect(breaker.isOpen(K)).toBe(false);
    expect(breaker.isOpen(K, 'attacker')).toBe(true);
  });
});
