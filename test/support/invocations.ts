/**
 * The gateway's ended Function URL invocations (its `onInvocation` hook), for a test that must know a
 * request's invocation is over (routing, settle and log done: a streamed one ends after its handler
 * settles) instead of waiting a fixed time.
 */
import { vi } from 'vitest';
import type { InvocationRecord } from '../../local/function-url';

export interface InvocationLog {
  /** Pass to `startGateway({ onInvocation })`. */
  onInvocation: (record: InvocationRecord) => void;
  /**
   * Resolves once an invocation that began at or after `since` (epoch ms, taken before the request was
   * sent) has ended.
   * @throws Error when none has ended within `ms`.
   */
  endedSince(since: number, ms?: number): Promise<void>;
}

/** A new, empty log of ended invocations, each with its start time (epoch ms). */
export function invocationLog(): InvocationLog {
  const startedAt: number[] = [];
  return {
    onInvocation: (record) => void startedAt.push(Date.now() - record.durationMs),
    endedSince: (since, ms = 10_000) =>
      vi.waitFor(
        () => {
          if (!startedAt.some((t) => t >= since)) throw new Error(`no invocation begun since ${new Date(since).toISOString()} has ended in ${ms} ms`);
        },
        { timeout: ms, interval: 10 },
      ),
  };
}
