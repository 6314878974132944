import { config, loadConfig } from '../config/env';

/**
 * How long a stored Responses API response is kept, in days: env `RESPONSE_RETENTION_DAYS`, default
 * 30 — OpenAI's retention of responses created with `store: true` (OpenAI API reference, "Create a
 * model response", `store`; "Your data": "Response objects are saved for 30 days by default"). Each
 * stored item carries the DynamoDB TTL attribute `expiresAt` = creation + this; DynamoDB deletes it
 * after that (usually within a few days, at no write cost) and readers treat it as gone from the
 * moment it passes. `0` turns storage off for the deployment: `store: true` then behaves as
 * `store: false` (nothing is written; references to responses are 404/400, as for unstored ones).
 */
export const DEFAULT_RESPONSE_RETENTION_DAYS = 30;

/**
 * The retention from a raw value of `RESPONSE_RETENTION_DAYS` (config/env.ts's schema; unset or
 * empty = the default); called with no argument, the container's config.
 * @throws ConfigError naming the variable when it is set but not an integer from 0 to 365.
 */
export function responseRetentionDays(...env: [string | undefined] | []): number {
  return env.length === 0 ? config().RESPONSE_RETENTION_DAYS : loadConfig({ RESPONSE_RETENTION_DAYS: env[0] }).RESPONSE_RETENTION_DAYS;
}

/** This container's retention (days; read once at load). */
export const RESPONSE_RETENTION_DAYS = responseRetentionDays();
