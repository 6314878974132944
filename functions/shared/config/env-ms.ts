import * as z from 'zod';

/**
 * Thrown when an environment variable the functions read holds a value they cannot use. The message
 * names the variable and what was expected, never a secret (these are durations, not keys).
 */
export class ConfigError extends Error {
  constructor(readonly variable: string, expected: string, got: string) {
    super(`Invalid environment variable ${variable}: expected ${expected}, got ${JSON.stringify(got)}`);
    this.name = 'ConfigError';
  }
}

const msSchema = z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/**
 * A duration (ms, a non-negative integer) from the environment variable `name`; `fallback` when it is
 * unset or empty. Replaces the per-module `Number(process.env.X) || default` reads, which turned a typo
 * into NaN or a silent default.
 * @throws ConfigError naming `name` when the value is set but not a non-negative integer.
 */
export function envMs(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const parsed = msSchema.safeParse(raw.trim());
  if (!parsed.success) throw new ConfigError(name, 'a non-negative integer of milliseconds', raw);
  return parsed.data;
}
