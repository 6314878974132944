/**
 * Per-provider credential checks. Any non-empty key is accepted except the literal `bad-key`, which
 * gets the provider's own bad-key answer — unless strict keys are set (`acceptedKeys`): then only the
 * listed keys are accepted and every other one gets that answer, as a real provider refuses a key it
 * never issued. Where each provider reads its key: providers.md §0.
 */
import type { Problem, SimCall } from './types.js';

/** The key sentinel that every simulated provider rejects. */
export const BAD_KEY = 'bad-key';

function bearer(headers: Record<string, string>): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(headers['authorization'] ?? '');
  return m?.[1]?.trim() || undefined;
}

function keyProblem(key: string | undefined, accepted: ReadonlySet<string> | undefined): Problem | undefined {
  if (!key) return { kind: 'auth', reason: 'missing' };
  if (key === BAD_KEY || (accepted !== undefined && !accepted.has(key))) return { kind: 'auth', reason: 'invalid', key };
  return undefined;
}

/**
 * The problem with the call's credentials (or required auth-adjacent headers), if any.
 * @param accepted strict keys: when set, only these keys are valid.
 */
export function checkAuth(call: SimCall, accepted?: ReadonlySet<string>): Problem | undefined {
  switch (call.route.wire) {
    case 'anthropic': {
      // The installed official SDK (@anthropic-ai/sdk 1.12) sends the key as `Authorization: Bearer`,
      // not `x-api-key` as providers.md §2.1 says; the API accepts both, so the simulator does too.
      const problem = keyProblem(call.headers['x-api-key'] || bearer(call.headers), accepted);
      if (problem) return problem;
      if (!call.headers['anthropic-version']) {
        return { kind: 'bad-request', message: 'anthropic-version: header is required' };
      }
      return undefined;
    }
    case 'gemini':
      return keyProblem(call.headers['x-goog-api-key'] || call.url.searchParams.get('key') || undefined, accepted);
    default:
      return keyProblem(bearer(call.headers), accepted);
  }
}
