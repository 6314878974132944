import type { RoutedBase } from '../routing/attempt-contract';

/** Tells the client who answered, without changing the body's `model` (the name it asked for). */
export function routingHeaders(outcome: RoutedBase): Record<string, string> {
  return {
    'x-modelmux-model': outcome.attempt.publicModel,
    'x-modelmux-provider': outcome.attempt.target.provider,
    'x-modelmux-attempts': String(outcome.attempts.length),
  };
}

/**
 * The routing headers' content for a stream whose headers went out before routing ended, as one SSE
 * comment line, e.g. `: x-modelmux-model=gpt-4o; provider=openai; attempts=2`. Comments are ignored
 * by SSE clients (WHATWG HTML, "Server-sent events": lines starting with a colon), so the OpenAI
 * SDK sees nothing; a raw reader can still learn who answered.
 */
export function routingComment(outcome: RoutedBase): string {
  const h = routingHeaders(outcome);
  return `: x-modelmux-model=${h['x-modelmux-model']}; provider=${h['x-modelmux-provider']}; attempts=${h['x-modelmux-attempts']}\n\n`;
}
