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
});
