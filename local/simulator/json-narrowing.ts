/**
 * Narrowing helpers for request bodies the simulator receives as `unknown` JSON. Tolerant on
 * purpose: a wrong type reads as absent, and the caller decides whether that is a 400.
 */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** `obj[name]`, or its snake_case spelling: Gemini accepts both on input (providers.md §3.1). */
export function field(obj: unknown, name: string): unknown {
  if (!isObject(obj)) return undefined;
  if (obj[name] !== undefined) return obj[name];
  const snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return obj[snake];
}
