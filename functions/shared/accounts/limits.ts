/** Account limits from the spec (§8 "Limits"). */

/** At most this many active API keys per account (spec §5.4, §8). */
export const MAX_KEYS_PER_ACCOUNT = 5;

/** Free tokens a new account receives, no payment card needed (spec §8). Tokens, input or output alike. */
export const NEW_ACCOUNT_FREE_TOKENS = 200_000;
