/**
 * A provider-neutral description of an error the simulator must answer with. Each provider module
 * renders it in that provider's own error shape and status (providers.md §1.5, §2.7, §3.5, §4.5, §5.4).
 */

export type Problem =
  /** Missing or rejected API key (the literal key `bad-key`, or the `api-key-invalid` fault). */
  | { kind: 'auth'; reason: 'missing' | 'invalid'; key?: string }
  /** Retired upstream ids (retired-models.ts) and ids containing `decommissioned` or `retired`. */
  | { kind: 'model-not-found'; model: string }
  | { kind: 'bad-request'; message: string; param?: string; code?: string }
  /** No such endpoint at this provider (e.g. DeepSeek embeddings). */
  | { kind: 'no-route'; method: string; path: string }
  /** The `context-length` fault: the prompt (`tokens`) is over the model's window (`limit`). */
  | { kind: 'context-length'; limit: number; tokens: number }
  /** The `status` fault. */
  | { kind: 'status'; status: number; retryAfterSeconds?: number; retryAfterMs?: number };

/** `retry-after` / `retry-after-ms` headers for a status problem (both honoured by the OpenAI and
 * Anthropic SDKs, providers.md §1.6). */
export function retryHeaders(p: Problem): Record<string, string> {
  if (p.kind !== 'status') return {};
  const h: Record<string, string> = {};
  if (p.retryAfterSeconds !== undefined) h['retry-after'] = String(p.retryAfterSeconds);
  if (p.retryAfterMs !== undefined) h['retry-after-ms'] = String(p.retryAfterMs);
  return h;
}

/** Key as echoed in error messages: masked like the real providers do. */
export function maskKey(key: string | undefined): string {
  if (!key) return '***';
  return key.length <= 8 ? key : `${key.slice(0, 3)}…${key.slice(-4)}`;
}
