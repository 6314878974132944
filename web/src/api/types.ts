/**
 * The account API's shapes, exactly as DATA-MODEL.md §7 gives them (this is
 * their one client-side copy: if a shape moves, it moves here). Money is USD as a number WITH the exact
 * integer nano-USD beside it; the dashboard computes and displays from the integers. Times are ISO 8601.
 */

/** `GET /config.json` (public): where the user pool is. `cognitoEndpoint` only when not AWS's own (locally). */
export interface SiteConfig {
  region: string;
  userPoolId: string;
  userPoolClientId: string;
  cognitoEndpoint?: string;
}

/** `GET /v1/account` → `data`. */
export interface Account {
  id: string;
  email: string | null;
  created_at: string;
  /** Free tokens available now (not held). */
  free_tokens: number;
  /** Free tokens reserved by requests in flight. */
  free_tokens_held: number;
  credit: number;
  credit_nano_usd: number;
  credit_held: number;
  credit_held_nano_usd: number;
  total_usage: number;
  total_usage_nano_usd: number;
  /** Spend in the current calendar month (UTC). */
  month_usage: number;
  month_usage_nano_usd: number;
  is_free_tier: boolean;
  key_count: number;
  /** Always 5 (spec: at most 5 keys per account). */
  key_limit: number;
  /** null = no limit of that kind. */
  rate_limit: { requests_per_minute: number | null; concurrent_requests: number | null };
  /** Stripe is configured: the dashboard offers "Add credit". */
  payments_enabled: boolean;
  /** null, or why the sign-up got no free tokens. */
  free_grant_withheld: 'already_granted' | 'disposable_domain' | 'ip_limit' | null;
}

/** `POST /v1/credits/checkout` → a Stripe Checkout Session to send the browser to. */
export interface CheckoutSession {
  id: string;
  url: string;
}

/** `GET|PUT /v1/credits/auto-top-up` → `data`: auto top-up and the low-balance email (USD). */
export interface AutoTopUp {
  enabled: boolean;
  paused: boolean;
  paused_reason: string | null;
  threshold_usd: number | null;
  amount_usd: number | null;
  monthly_cap_usd: number | null;
  month_to_date_usd: number;
  /** The card saved by a checkout with `setup_future_usage: off_session`. */
  payment_method: { id: string; customer: string | null } | null;
  low_balance_alert_usd: number | null;
}

/** `PUT /v1/credits/auto-top-up` body. */
export interface AutoTopUpRequest {
  enabled: boolean;
  threshold_usd: number;
  amount_usd: number;
  monthly_cap_usd: number;
}

/** `GET /v1/credits/purchases` → `data[]`: money from Stripe (refunds and disputes negative). */
export interface Purchase {
  id: string;
  kind: 'top_up' | 'auto_top_up' | 'refund' | 'dispute';
  amount: number;
  amount_nano_usd: number;
  created_at: string;
  receipt_url: string | null;
  stripe_id: string;
}

/** How often a key's spend limit starts over; null = never. */
export type LimitReset = 'daily' | 'weekly' | 'monthly';

/** OpenRouter's key shape plus ours (§7 KeyRecord). `limit…` fields are null when the key has no limit. */
export interface KeyRecord {
  /** SHA-256 hex of the key: its id in the API. */
  hash: string;
  name: string;
  /** The display hint, e.g. `sk-mux-AbCd…`. */
  label: string;
  disabled: boolean;
  limit: number | null;
  limit_nano_usd: number | null;
  limit_remaining: number | null;
  limit_remaining_nano_usd: number | null;
  limit_reset: LimitReset | null;
  usage: number;
  usage_nano_usd: number;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
}

/** `POST /v1/keys` body. `limit` in USD. */
export interface CreateKeyRequest {
  name: string;
  limit?: number | null;
  limit_reset?: LimitReset | null;
}

/** `POST /v1/keys` → 201: the only time the key itself is shown. */
export interface CreatedKey {
  key: string;
  data: KeyRecord;
}

/** `PATCH /v1/keys/{hash}` body: any of these. */
export interface UpdateKeyRequest {
  name?: string;
  disabled?: boolean;
  limit?: number | null;
  limit_reset?: LimitReset | null;
}

/** `GET /v1/credits` → `data`. */
export interface Credits {
  total_credits: number;
  total_credits_nano_usd: number;
  total_usage: number;
  total_usage_nano_usd: number;
}

/** One `GET /v1/activity` row: one UTC day × model × key. */
export interface ActivityRow {
  /** `YYYY-MM-DD` (UTC). */
  date: string;
  /** The public model name asked for. */
  model: string;
  provider_name: string;
  key_hash: string;
  key_name: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  usage: number;
  usage_nano_usd: number;
  byok_requests: number;
  /** Of `prompt_tokens`, read from the provider's prompt cache. */
  cached_tokens: number;
  /** Of `prompt_tokens`, written to the provider's prompt cache. */
  cache_write_tokens: number;
  /** What the cache reads saved (USD; the exact nano-USD beside it). */
  cache_discount: number;
  cache_discount_nano_usd: number;
}

/** A provider key attached by the user (`GET /v1/byok` rows; PUT/PATCH answers). Never the key itself. */
export interface ByokKey {
  provider: string;
  last4: string;
  allow_fallback: boolean;
  created_at: string;
  /** Sent by the API beside §7's fields. */
  updated_at?: string;
}

/** `GET /v1/byok`: the attached keys, and (beside §7) the providers that take one. */
export interface ByokList {
  data: ByokKey[];
  providers?: string[];
  /** The catalogue's public models each provider's key serves. */
  served_models?: Record<string, string[]>;
}
