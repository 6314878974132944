import { describe, expect, it } from 'vitest';
import { freshKeyState, limitRemainingNanoUsd, limitWindowId } from '../../functions/shared/accounts/keys/key-account-entry';

describe('key limit windows', () => {
  it('names the UTC day, ISO week (Monday first) and month a moment falls in', () => {
    expect(limitWindowId('daily', new Date('2026-11-24T23:59:59.999Z'))).toBe('2026-11-24');
    expect(limitWindowId('daily', new Date('2026-11-25T00:00:00.000Z'))).toBe('2026-11-25');
    expect(limitWindowId('monthly', new Date('2026-11-30T23:59:59Z'))).toBe('2026-11');
    // ISO 8601 weeks: 2026-11-23 is the Monday of week 48; Sunday 2026-11-29 still is.
    expect(limitWindowId('weekly', new Date('2026-11-23T00:00:00Z'))).toBe('2026-W48');
    expect(limitWindowId('weekly', new Date('2026-11-29T23:59:59Z'))).toBe('2026-W48');
    expect(limitWindowId('weekly', new Date('2026-11-30T00:00:00Z'))).toBe('2026-W49');
    // Year boundaries: 2027-01-01 (a Friday) belongs to 2026-W53; 2024-12-30 (a Monday) to 2025-W01.
    expect(limitWindowId('weekly', new Date('2027-01-01T12:00:00Z'))).toBe('2026-W53');
    expect(limitWindowId('weekly', new Date('2024-12-30T12:00:00Z'))).toBe('2025-W01');
    expect(limitWindowId(undefined)).toBe('all');
  });

  it('reports what is left in the current window, and the whole limit less held in a new one', () => {
    const now = new Date('2026-11-24T10:00:00Z');
    const state = { ...freshKeyState('active', 1_000, 'daily', now), leftNanoUsd: 300, heldNanoUsd: 100 };
    expect(limitRemainingNanoUsd(state, 1_000, now)).toBe(300);
    expect(limitRemainingNanoUsd(state, 1_000, new Date('2026-11-25T00:00:01Z'))).toBe(900);
    expect(limitRemainingNanoUsd({ ...state, leftNanoUsd: -50 }, 1_000, now)).toBe(0);
    expect(limitRemainingNanoUsd(state, undefined, now)).toBeUndefined();
  });
});
