import { describe, expect, it } from 'vitest';
import { InvalidRequestError, UpstreamUnavailableError } from '../../functions/shared/errors/gateway-errors';
import { attemptOutcome, exhausted, ours, OwnFailure, type AttemptRecord } from '../../functions/shared/routing/attempt-contract';
import { UpstreamAttemptError } from '../../functions/shared/providers/types';
import { makeFailure } from '../../functions/shared/providers/upstream-failure';
import { AttemptAbortedError } from '../../functions/shared/routing/upstream-call';

/** The client's answer when every attempt failed, and the verdict on one that did. */

const rec = (publicModel: string, outcome: AttemptRecord['outcome'], status: number): AttemptRecord => ({
  publicModel,
  provider: 'p',
  upstreamModel: 'u',
  outcome,
  status,
  ms: 1,
});

describe('exhausted', () => {
  it('a prompt too long for every target is the client\'s 400 context_length_exceeded, not a 502 "retry"', () => {
    const err = exhausted([rec('gpt-4o', 'context-length', 400), rec('claude-3-5-sonnet', 'context-length', 400)], false, 200_000);
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages' });
    expect(err.message).toContain('gpt-4o, claude-3-5-sonnet');
    expect(err.message).toContain('200000 tokens');
    expect(err.message).not.toMatch(/retry/i);
  });

  it('is still 400 when a larger-window equivalent failed otherwise (the prompt is what the client can change)', () => {
    expect(exhausted([rec('gpt-4o', 'context-length', 400), rec('claude-3-5-sonnet', 'overloaded', 529)], false, 128_000)).toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
    });
  });

  it('the deadline cutting the plan short is a 504, whatever came before', () => {
    expect(exhausted([rec('gpt-4o', 'context-length', 400)], true, 128_000)).toMatchObject({ status: 504 });
  });

  it('all timeouts: 504; overload, rate limits, 5xx, network: 503 with retry-after; a bad answer: 502', () => {
    expect(exhausted([rec('a', 'timeout', 0), rec('b', 'timeout', 408)], false)).toMatchObject({ status: 504 });
    const e503 = exhausted([rec('a', 'overloaded', 529), rec('b', 'rate-limit', 429), rec('c', 'connection', 0), rec('d', 'server', 500)], false);
    expect(e503).toBeInstanceOf(UpstreamUnavailableError);
    expect(e503).toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
    expect(exhausted([rec('a', 'server', 200), rec('b', 'overloaded', 503)], false)).toMatchObject({ status: 502 });
    expect(exhausted([rec('a', 'auth-config', 401)], false)).toMatchObject({ status: 502 });
  });
});

describe('attemptOutcome (the one classification of what an attempt threw)', () => {
  it("tells our bug, the upstream's verdict, our timers, the network and the client's error apart", () => {
    const bug = new TypeError('x is undefined');
    expect(attemptOutcome(new OwnFailure(bug))).toEqual({ kind: 'own-failure', error: bug });
    const verdict = makeFailure('overloaded', 529, 'busy');
    expect(attemptOutcome(new UpstreamAttemptError(verdict))).toEqual({ kind: 'failed', failure: verdict });
    expect(attemptOutcome(new AttemptAbortedError('first-token-timeout'))).toMatchObject({ kind: 'failed', failure: { kind: 'timeout', retryable: true } });
    expect(attemptOutcome(new AttemptAbortedError('network', Object.assign(new Error('reset'), { code: 'ECONNRESET' })))).toMatchObject({
      kind: 'failed',
      failure: { kind: 'connection', retryable: true },
    });
    const refused = new InvalidRequestError('n > 1 is not supported', { param: 'n' });
    expect(attemptOutcome(refused)).toMatchObject({ kind: 'failed', failure: { kind: 'client', retryable: false, status: 400, clientError: refused } });
  });

  it("keeps a bug of ours apart from the adapter's and the client's errors", () => {
    expect(() =>
      ours(() => {
        throw new Error('bug');
      }),
    ).toThrow(OwnFailure);
    const verdict = new UpstreamAttemptError(makeFailure('server', 500, 'x'));
    expect(() =>
      ours(() => {
        throw verdict;
      }),
    ).toThrow(verdict);
  });
});
