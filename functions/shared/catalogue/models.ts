import type { CatalogueEntryData, CatalogueTargetData, Capabilities } from './schema';

/**
 * The model catalogue as data: public name → ordered upstream targets (live ids, upstream prices with
 * the date read and the source), capabilities, and equivalents for fallback. Typed by the schema and
 * validated against `catalogueSchema` in test/catalogue; displayed prices (upstream × 1.055) are
 * computed by `buildCatalogue`, never typed.
 *
 * Facts: docs/providers.md (§8 prices, §2.8/§3.8/§4.2/§5.1/§6 lifecycles), read 2026-11-22; prompt-cache
 * prices and their sources: docs/prices.md (read 2026-11-26). Several ids the spec names are retired
 * upstream; each such entry says where it now goes.
 */

// Files: PDF `file` parts, which OpenAI's vision models, Claude (document blocks) and Gemini (inline
// data) read. Audio: no catalogue model takes `input_audio` yet. OpenAI's needs its separate
// audio-preview models, and Gemini prices audio input above text ($1.00 vs $0.30 per 1M on 2.5 Flash,
// providers.md §8) while the ledger prices every prompt token alike: enabling it would bill below cost.
const TEXT: Capabilities = { tools: true, vision: false, reasoning: 'none', jsonMode: true, files: false, audio: false };
const VISION: Capabilities = { tools: true, vision: true, reasoning: 'none', jsonMode: true, files: true, audio: false };
const VISION_THINKING: Capabilities = { ...VISION, reasoning: 'exposed' };
const EMBEDDING: Capabilities = { tools: false, vision: false, reasoning: 'none', jsonMode: false, files: false, audio: false };

const OPENAI_PRICING = 'openai.com/api/pricing (providers.md §8)';
const ANTHROPIC_PRICING = 'platform.claude.com pricing (providers.md §8)';
const GEMINI_PRICING = 'ai.google.dev pricing (providers.md §8)';
const MINIMAX_PRICING = 'platform.minimax.io pricing-paygo (providers.md §8)';

/**
 * When the prices below were read: from providers.md §8 (itself compiled from the providers' pricing
 * pages and their mirrors, 2025–2026), on this date.
 */
const READ_ON = '2026-11-22';

/**
 * Prompt-cache prices, USD per 1M tokens (docs/prices.md): a cache read, a 5-minute and a 1-hour cache
 * write. A bucket left out costs the input price (the provider has no such discount or premium).
 */
interface CachePrices {
  read?: number;
  write5m?: number;
  write1h?: number;
}

type PriceTuple = [input: number, output: number, readOn: string, source: string, cache?: CachePrices];

/** When the cache prices were read (docs/prices.md). */
const CACHE_READ_ON = '2026-11-26';

/** One catalogue target, named field by field (prices as a {@link PriceTuple}: USD per 1M tokens). */
interface TargetOptions extends Pick<
  CatalogueTargetData,
  | 'provider'
  | 'upstreamModel'
  | 'contextWindow'
  | 'maxOutputTokens'
  | 'capabilities'
  | 'upstreamParams'
  | 'dimensions'
  | 'fixedDimensions'
  | 'timeouts'
  | 'latency'
  | 'image'
  | 'imageTokens'
> {
  price: PriceTuple;
}

function target({ provider, upstreamModel, price, contextWindow, maxOutputTokens, capabilities, ...extra }: TargetOptions): CatalogueTargetData {
  const [inputUsdPerMTok, outputUsdPerMTok, readOn, source, cache] = price;
  const cachePrices = {
    ...(cache?.read !== undefined ? { cachedInputUsdPerMTok: cache.read } : {}),
    ...(cache?.write5m !== undefined ? { cacheWrite5mUsdPerMTok: cache.write5m } : {}),
    ...(cache?.write1h !== undefined ? { cacheWrite1hUsdPerMTok: cache.write1h } : {}),
  };
  const when = cache === undefined ? readOn : CACHE_READ_ON;
  return {
    provider,
    upstreamModel,
    price: { inputUsdPerMTok, outputUsdPerMTok, ...cachePrices, readOn: when, source },
    contextWindow,
    maxOutputTokens,
    capabilities,
    ...extra,
  };
}

function withLongContext(t: CatalogueTargetData, longContext: NonNullable<CatalogueTargetData['price']['longContext']>): CatalogueTargetData {
  return { ...t, price: { ...t.price, longContext } };
}

// Claude models all share Anthropic's 200K window. Their cache prices are fixed multiples of the
// input price: read 0.1×, 5-minute write 1.25×, 1-hour write 2× (docs/prices.md; providers.md §8).
const claude = (id: string, price: [number, number], maxOut: number) =>
  target({
    provider: 'anthropic',
    upstreamModel: id,
    price: [price[0], price[1], READ_ON, ANTHROPIC_PRICING, { read: price[0] / 10, write5m: price[0] * 1.25, write1h: price[0] * 2 }],
    contextWindow: 200_000,
    maxOutputTokens: maxOut,
    capabilities: VISION_THINKING,
  });

const claudeSonnet46 = claude('claude-sonnet-4-6', [3, 15], 64_000);
const claudeOpus46 = claude('claude-opus-4-6', [5, 25], 64_000);
const gemini25FlashLite = target({
  provider: 'gemini',
  upstreamModel: 'gemini-2.5-flash-lite',
  price: [0.1, 0.4, READ_ON, GEMINI_PRICING, { read: 0.01 }],
  contextWindow: 1_048_576,
  maxOutputTokens: 65_536,
  capabilities: VISION,
});
// Gemini 2.5 Flash and Pro think by default (Pro always; providers.md §3.8): `thinking` time limits.
const gemini25Flash = target({
  provider: 'gemini',
  upstreamModel: 'gemini-2.5-flash',
  price: [0.3, 2.5, READ_ON, GEMINI_PRICING, { read: 0.03 }],
  contextWindow: 1_048_576,
  maxOutputTokens: 65_536,
  capabilities: VISION_THINKING,
  latency: 'thinking',
});
// Gemini 2.5 Pro bills the whole request at $2.50 / $15 once the prompt is over 200K tokens (providers.md §8).
const gemini25Pro = withLongContext(
  target({
    provider: 'gemini',
    upstreamModel: 'gemini-2.5-pro',
    price: [1.25, 10, READ_ON, GEMINI_PRICING, { read: 0.125 }],
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    capabilities: VISION_THINKING,
    latency: 'thinking',
  }),
  { promptTokensAbove: 200_000, inputUsdPerMTok: 2.5, outputUsdPerMTok: 15, cachedInputUsdPerMTok: 0.25 },
);
// DeepSeek V4 (2026-04-24) replaced V3/R1; deepseek-chat / deepseek-reasoner were retired after
// 2026-07-24 (providers.md §4.2). V4 prices are low-confidence third-party figures (⚠, §8): the only
// V4-Flash figure on record is the OFF-PEAK price of a 2026-10 third-party page; the peak price is
// unverified, and peak-hour requests may cost more upstream than we charge. Verify on
// api-docs.deepseek.com before production and update this line.
// Cache hit: $0.0028 (api-docs.deepseek.com/quick_start/pricing as quoted 2026-07-04; docs/prices.md).
const V4_FLASH_PRICE: PriceTuple = [
  0.15,
  0.6,
  READ_ON,
  'off-peak figure of a 2026-10 third-party page; peak unverified (providers.md §8 ⚠); cache hit: docs/prices.md',
  { read: 0.0028 },
];
const deepseekV4Flash = target({
  provider: 'deepseek',
  upstreamModel: 'deepseek-v4-flash',
  price: V4_FLASH_PRICE,
  contextWindow: 128_000,
  maxOutputTokens: 8_192,
  capabilities: TEXT,
  upstreamParams: { thinking: { type: 'disabled' } },
});
const deepseekV4FlashThinking = target({
  provider: 'deepseek',
  upstreamModel: 'deepseek-v4-flash',
  price: V4_FLASH_PRICE,
  contextWindow: 128_000,
  maxOutputTokens: 32_768,
  capabilities: { ...TEXT, reasoning: 'exposed' },
  upstreamParams: { thinking: { type: 'enabled' } },
  latency: 'thinking',
});
// MiniMax's passive cache on its OpenAI-compatible API bills hits at the read price and writes at the
// input price (no write bucket); the $0.375 write price is its explicit (Anthropic-API) cache's, an
// endpoint modelmux does not call (docs/prices.md).
const minimax = (id: string, price: [number, number, number]) =>
  // M2.x always reasons (thinking cannot be disabled, providers.md §5.2): `thinking` time limits.
  target({
    provider: 'minimax',
    upstreamModel: id,
    price: [price[0], price[1], READ_ON, MINIMAX_PRICING, { read: price[2] }],
    contextWindow: 204_800,
    maxOutputTokens: 131_072,
    capabilities: { ...TEXT, reasoning: 'exposed' },
    latency: 'thinking',
  });
const openaiEmbedding = (id: string, price: number, dimensions: number, fixed?: { fixedDimensions: true }) =>
  target({
    provider: 'openai',
    upstreamModel: id,
    price: [price, 0, READ_ON, OPENAI_PRICING],
    contextWindow: 8_192,
    maxOutputTokens: 1,
    capabilities: EMBEDDING,
    dimensions,
    ...fixed,
  });

// Image models (docs/prices.md "Image generation", read 2026-11-27). Prompts are text; the images
// come back as output tokens, billed like any output: tokens × the output price.
const IMAGE: Capabilities = { tools: false, vision: false, reasoning: 'none', jsonMode: false, files: false, audio: false };
const IMAGES_READ_ON = '2026-11-27';
// One image can take a minute at high quality: a buffered image call waits up to 50 s for its answer.
const IMAGE_TIMEOUTS: CatalogueTargetData['timeouts'] = { buffered: { headersMs: 50_000, firstTokenMs: 50_000 } };
// GPT Image output tokens per image, by size and quality (the same table for gpt-image-1 and 1.5;
// docs/prices.md): the per-image prices OpenAI lists are these counts × the image output price.
const GPT_IMAGE_TOKENS = {
  '1024x1024': { low: 272, medium: 1056, high: 4160 },
  '1024x1536': { low: 408, medium: 1584, high: 6240 },
  '1536x1024': { low: 400, medium: 1568, high: 6208 },
};
// Gemini 2.5 Flash Image: 1,290 output tokens per image up to 1024×1024 px, at any aspect ratio
// (docs/prices.md); OpenAI's sizes map to its 1:1, 2:3 and 3:2 ratios (providers/gemini/images.ts).
const GEMINI_IMAGE_TOKENS = { low: 1290, medium: 1290, high: 1290 };

/** The catalogue (34 models: 27 chat, 5 embedding, 2 image). */
export const CATALOGUE_DATA: CatalogueEntryData[] = [
  // ── OpenAI ──────────────────────────────────────────────────────────────────────────────────────
  {
    id: 'gpt-4o',
    kind: 'chat',
    ownedBy: 'openai',
    created: 1715367049,
    description: 'GPT-4o, OpenAI flagship multimodal model.',
    targets: [
      target({
        provider: 'openai',
        upstreamModel: 'gpt-4o',
        price: [2.5, 10, READ_ON, OPENAI_PRICING, { read: 1.25 }],
        contextWindow: 128_000,
        maxOutputTokens: 16_384,
        capabilities: VISION,
      }),
    ],
    equivalents: ['claude-3-5-sonnet', 'gemini-2.5-pro'],
  },
  {
    id: 'gpt-4o-mini',
    kind: 'chat',
    ownedBy: 'openai',
    created: 1721172741,
    description: 'GPT-4o mini: the small, fast and cheap GPT-4o variant.',
    targets: [
      target({
        provider: 'openai',
        upstreamModel: 'gpt-4o-mini',
        price: [0.15, 0.6, READ_ON, OPENAI_PRICING, { read: 0.075 }],
        contextWindow: 128_000,
        maxOutputTokens: 16_384,
        capabilities: VISION,
        imageTokens: 'openai-mini-tiles',
      }),
    ],
    equivalents: ['gemini-2.0-flash', 'claude-haiku-4-5'],
    // Hedged: the small fast tier is where latency matters most and a duplicated prompt costs least.
    // p95 first token ≈ 2 s (median ~0.77 s for OpenAI's mini models, routing/timeouts.ts [a]).
    hedge: { afterMs: 2_000 },
  },
  {
    id: 'o3-mini',
    kind: 'chat',
    ownedBy: 'openai',
    created: 1738010200,
    description: 'o3-mini reasoning model (reasoning hidden, billed as output).',
    // Hidden reasoning happens before the first visible token: its limits are the `hidden-thinking`
    // row of routing/timeouts.ts (derived from `reasoning: 'hidden'`).
    targets: [
      target({
        provider: 'openai',
        upstreamModel: 'o3-mini',
        price: [1.1, 4.4, READ_ON, OPENAI_PRICING, { read: 0.55 }],
        contextWindow: 200_000,
        maxOutputTokens: 100_000,
        capabilities: { ...TEXT, reasoning: 'hidden' },
      }),
    ],
    equivalents: ['deepseek-r1'],
  },
  // ── Anthropic ───────────────────────────────────────────────────────────────────────────────────
  {
    // claude-3-5-sonnet-2024xxxx was retired upstream in Oct 2025 (providers.md §2.8): the public name
    // now serves Claude Sonnet 4.6, the live Sonnet at the same $3 / $15 price.
    id: 'claude-3-5-sonnet',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1729555200,
    description: 'Claude 3.5 Sonnet class (served by Claude Sonnet 4.6; 3.5 Sonnet is retired upstream).',
    targets: [claudeSonnet46, claude('claude-sonnet-4-5', [3, 15], 64_000)],
    equivalents: ['gpt-4o'],
  },
  {
    // claude-sonnet-4-20250514 retired 2026-06-15 (providers.md §2.8): served by Sonnet 4.6.
    id: 'claude-sonnet-4',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1747267200,
    description: 'Claude Sonnet 4 class (served by Claude Sonnet 4.6; Sonnet 4 is retired upstream).',
    targets: [claudeSonnet46],
    equivalents: ['gpt-4o'],
  },
  {
    id: 'claude-sonnet-4-5',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1759104000,
    description: 'Claude Sonnet 4.5 (deprecated upstream; falls back to Sonnet 4.6).',
    targets: [claude('claude-sonnet-4-5', [3, 15], 64_000), claudeSonnet46],
    equivalents: ['gpt-4o'],
  },
  {
    id: 'claude-sonnet-4-6',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1771200000,
    description: 'Claude Sonnet 4.6.',
    targets: [claudeSonnet46],
    equivalents: ['gpt-4o'],
  },
  {
    // claude-opus-4-20250514 retired 2026-06-15 (providers.md §2.8): served by Opus 4.6 ($5 / $25).
    id: 'claude-opus-4',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1747267200,
    description: 'Claude Opus 4 class (served by Claude Opus 4.6; Opus 4 is retired upstream).',
    targets: [claudeOpus46],
    equivalents: ['claude-opus-4-5', 'gemini-2.5-pro', 'claude-sonnet-4-6'],
  },
  {
    id: 'claude-opus-4-5',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1761955200,
    description: 'Claude Opus 4.5.',
    targets: [claude('claude-opus-4-5', [5, 25], 64_000), claudeOpus46],
    equivalents: ['gemini-2.5-pro', 'claude-sonnet-4-6'],
  },
  {
    id: 'claude-opus-4-6',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1771200000,
    description: 'Claude Opus 4.6.',
    targets: [claudeOpus46],
    equivalents: ['claude-opus-4-5', 'gemini-2.5-pro', 'claude-sonnet-4-6'],
  },
  {
    id: 'claude-haiku-4-5',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1759276800,
    description: 'Claude Haiku 4.5: fast and cheap.',
    targets: [claude('claude-haiku-4-5', [1, 5], 64_000)],
    equivalents: ['gpt-4o-mini'],
    // Hedged after the `standard` p95 (3 s; Haiku 4.5's median first token is ~1.4 s, routing/timeouts.ts [a]).
    hedge: {},
  },
  // ── Google Gemini ───────────────────────────────────────────────────────────────────────────────
  {
    // gemini-2.0-flash is shut down upstream (reported June 2026, providers.md §3.8): served by
    // gemini-2.5-flash-lite, the live model at the same $0.10 / $0.40 price, thinking off by default.
    id: 'gemini-2.0-flash',
    kind: 'chat',
    ownedBy: 'google',
    created: 1738713600,
    description: 'Gemini 2.0 Flash class (served by Gemini 2.5 Flash-Lite; 2.0 Flash is shut down upstream).',
    targets: [gemini25FlashLite],
    equivalents: ['gpt-4o-mini'],
  },
  {
    // gemini-1.5-pro retired Sept 2025 (providers.md §3.8): its current equivalent is gemini-2.5-pro.
    id: 'gemini-1.5-pro',
    kind: 'chat',
    ownedBy: 'google',
    created: 1727740800,
    description: 'Gemini 1.5 Pro class (served by Gemini 2.5 Pro; 1.5 Pro is retired upstream).',
    targets: [gemini25Pro],
    equivalents: ['gpt-4o'],
  },
  {
    // gemini-1.5-flash is retired (providers.md §3.8): served by gemini-2.5-flash-lite.
    id: 'gemini-1.5-flash',
    kind: 'chat',
    ownedBy: 'google',
    created: 1727740800,
    description: 'Gemini 1.5 Flash class (served by Gemini 2.5 Flash-Lite; 1.5 Flash is retired upstream).',
    targets: [gemini25FlashLite],
    equivalents: ['gpt-4o-mini'],
  },
  {
    id: 'gemini-2.5-pro',
    kind: 'chat',
    ownedBy: 'google',
    created: 1750118400,
    description: 'Gemini 2.5 Pro (thinking always on).',
    targets: [gemini25Pro],
    equivalents: ['gpt-4o'],
  },
  {
    id: 'gemini-2.5-flash',
    kind: 'chat',
    ownedBy: 'google',
    created: 1750118400,
    description: 'Gemini 2.5 Flash.',
    targets: [gemini25Flash],
    equivalents: ['gpt-4o-mini'],
  },
  {
    id: 'gemini-2.5-flash-lite',
    kind: 'chat',
    ownedBy: 'google',
    created: 1753142400,
    description: 'Gemini 2.5 Flash-Lite.',
    targets: [gemini25FlashLite],
    equivalents: ['gpt-4o-mini'],
  },
  // ── DeepSeek ────────────────────────────────────────────────────────────────────────────────────
  {
    // deepseek-chat (V3) was retired after 2026-07-24: V3's successor is V4-Flash in non-thinking mode.
    id: 'deepseek-v3',
    kind: 'chat',
    ownedBy: 'deepseek',
    created: 1735084800,
    description: 'DeepSeek V3 class (served by DeepSeek V4-Flash, non-thinking; V3 is retired upstream).',
    targets: [deepseekV4Flash],
    equivalents: ['llama-3-70b', 'gpt-4o-mini'],
  },
  {
    // deepseek-reasoner (R1) was retired after 2026-07-24: served by V4-Flash in thinking mode, which
    // returns reasoning_content like R1 did.
    id: 'deepseek-r1',
    kind: 'chat',
    ownedBy: 'deepseek',
    created: 1737331200,
    description: 'DeepSeek R1 reasoning class (served by DeepSeek V4-Flash, thinking mode; R1 is retired upstream).',
    targets: [deepseekV4FlashThinking],
    equivalents: ['o3-mini'],
  },
  {
    id: 'deepseek-chat',
    kind: 'chat',
    ownedBy: 'deepseek',
    created: 1735084800,
    description: 'DeepSeek Chat (the retired alias now means V4-Flash, non-thinking).',
    targets: [deepseekV4Flash],
    equivalents: ['deepseek-v3', 'gpt-4o-mini'],
  },
  {
    // DeepSeek Coder was merged into the chat model (V2.5, 2024); the live coder is V4-Flash.
    id: 'deepseek-coder',
    kind: 'chat',
    ownedBy: 'deepseek',
    created: 1735084800,
    description: 'DeepSeek Coder (merged into DeepSeek chat upstream; served by V4-Flash).',
    targets: [deepseekV4Flash],
    equivalents: ['gpt-4o-mini'],
  },
  {
    id: 'deepseek-v4-pro',
    kind: 'chat',
    ownedBy: 'deepseek',
    created: 1776988800,
    description: 'DeepSeek V4-Pro.',
    targets: [
      target({
        provider: 'deepseek',
        upstreamModel: 'deepseek-v4-pro',
        price: [0.66, 1.98, READ_ON, 'a 2026-10 third-party page, peak/off-peak unclear (providers.md §8 ⚠); cache hit: docs/prices.md', { read: 0.003625 }],
        contextWindow: 128_000,
        maxOutputTokens: 32_768,
        capabilities: TEXT,
        upstreamParams: { thinking: { type: 'disabled' } },
      }),
    ],
    equivalents: ['deepseek-v3'],
  },
  // ── MiniMax ─────────────────────────────────────────────────────────────────────────────────────
  {
    id: 'minimax',
    kind: 'chat',
    ownedBy: 'minimax',
    created: 1773792000,
    description: 'MiniMax M2.7 reasoning model.',
    targets: [minimax('MiniMax-M2.7', [0.3, 1.2, 0.06]), minimax('MiniMax-M2.5', [0.3, 1.2, 0.03])],
    equivalents: ['deepseek-r1'],
  },
  {
    id: 'minimax-m2.7-highspeed',
    kind: 'chat',
    ownedBy: 'minimax',
    created: 1773792000,
    description: 'MiniMax M2.7 highspeed.',
    targets: [minimax('MiniMax-M2.7-highspeed', [0.6, 2.4, 0.06])],
    equivalents: ['minimax'],
  },
  {
    id: 'minimax-m2.5',
    kind: 'chat',
    ownedBy: 'minimax',
    created: 1770854400,
    description: 'MiniMax M2.5.',
    targets: [minimax('MiniMax-M2.5', [0.3, 1.2, 0.03])],
    equivalents: ['minimax'],
  },
  // ── Llama-3 on OpenAI-compatible hosts ──────────────────────────────────────────────────────────
  {
    // Groq's llama3-70b-8192 and llama-3.3-70b-versatile are decommissioned (providers.md §6); the
    // original Llama-3 70B is no longer reliably hosted. Served by Llama 3.3 70B (same family, 128K)
    // on Together, then Llama 3.1 70B Turbo on DeepInfra (the DeepInfra 70B whose price is on record).
    id: 'llama-3-70b',
    kind: 'chat',
    ownedBy: 'meta',
    created: 1713398400,
    description: 'Llama-3 70B class (served by Llama 3.3 70B Instruct Turbo, then Llama 3.1 70B Instruct Turbo).',
    targets: [
      target({
        provider: 'together',
        upstreamModel: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
        price: [0.88, 0.88, READ_ON, 'together.ai pricing (providers.md §8)'],
        contextWindow: 131_072,
        maxOutputTokens: 8_192,
        capabilities: TEXT,
      }),
      target({
        provider: 'deepinfra',
        upstreamModel: 'meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo',
        price: [0.4, 0.4, READ_ON, 'deepinfra pricing, low confidence (providers.md §8 ⚠)'],
        contextWindow: 131_072,
        maxOutputTokens: 8_192,
        capabilities: TEXT,
      }),
    ],
    equivalents: ['deepseek-v3'],
  },
  {
    id: 'llama-3-8b',
    kind: 'chat',
    ownedBy: 'meta',
    created: 1713398400,
    description: 'Llama-3 8B class (served by Llama 3.1 8B Instruct Turbo).',
    targets: [
      target({
        provider: 'together',
        upstreamModel: 'meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo',
        price: [0.18, 0.18, READ_ON, 'together.ai pricing (providers.md §8)'],
        contextWindow: 131_072,
        maxOutputTokens: 8_192,
        capabilities: TEXT,
      }),
      target({
        provider: 'deepinfra',
        upstreamModel: 'meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo',
        price: [0.02, 0.03, READ_ON, 'deepinfra pricing, low confidence (providers.md §8 ⚠)'],
        contextWindow: 131_072,
        maxOutputTokens: 8_192,
        capabilities: TEXT,
      }),
    ],
    equivalents: ['gpt-4o-mini'],
  },
  // ── Embeddings ──────────────────────────────────────────────────────────────────────────────────
  // Embedding models never fall back to another model: vectors from different models live in
  // different spaces, and mixing them silently corrupts a vector index. Equivalents stay empty.
  {
    // DeepSeek has no embeddings API (POST /embeddings is 404, providers.md §4.1). The public name is
    // served by OpenAI text-embedding-3-small: the cheapest well-supported general-purpose model.
    id: 'deepseek-embed',
    kind: 'embedding',
    ownedBy: 'modelmux',
    created: 1735084800,
    description: 'Embedding model (served by OpenAI text-embedding-3-small, 1536 dims; DeepSeek has no embeddings API).',
    targets: [openaiEmbedding('text-embedding-3-small', 0.02, 1536)],
    equivalents: [],
  },
  {
    id: 'text-embedding-3-small',
    kind: 'embedding',
    ownedBy: 'openai',
    created: 1705948997,
    description: 'OpenAI text-embedding-3-small (1536 dims).',
    targets: [openaiEmbedding('text-embedding-3-small', 0.02, 1536)],
    equivalents: [],
  },
  {
    id: 'text-embedding-3-large',
    kind: 'embedding',
    ownedBy: 'openai',
    created: 1705953180,
    description: 'OpenAI text-embedding-3-large (3072 dims).',
    targets: [openaiEmbedding('text-embedding-3-large', 0.13, 3072)],
    equivalents: [],
  },
  {
    id: 'text-embedding-ada-002',
    kind: 'embedding',
    ownedBy: 'openai',
    created: 1671217299,
    description: 'OpenAI text-embedding-ada-002 (1536 dims).',
    // ada-002 has one vector length: OpenAI answers 400 "This model does not support specifying dimensions."
    targets: [openaiEmbedding('text-embedding-ada-002', 0.1, 1536, { fixedDimensions: true })],
    equivalents: [],
  },
  {
    id: 'gemini-embedding-001',
    kind: 'embedding',
    ownedBy: 'google',
    created: 1747094400,
    description: 'Google gemini-embedding-001 (3072 dims by default).',
    targets: [
      target({
        provider: 'gemini',
        upstreamModel: 'gemini-embedding-001',
        price: [0.15, 0, READ_ON, 'Google blog (providers.md §8)'],
        contextWindow: 2_048,
        maxOutputTokens: 1,
        capabilities: EMBEDDING,
        dimensions: 3072,
      }),
    ],
    equivalents: [],
  },
  // ── Image generation ────────────────────────────────────────────────────────────────────────
  {
    // gpt-image-1 was shut down upstream on 2026-10-23 (docs/prices.md "Image generation"): the public
    // name is served by gpt-image-1.5, its successor on the same endpoint, same sizes and token table.
    id: 'gpt-image-1',
    kind: 'image',
    ownedBy: 'openai',
    created: 1745366400,
    description: 'GPT Image 1 class (served by GPT Image 1.5; GPT Image 1 is shut down upstream). Images as b64_json.',
    targets: [
      target({
        provider: 'openai',
        upstreamModel: 'gpt-image-1.5',
        price: [5, 32, IMAGES_READ_ON, 'developers.openai.com gpt-image-1.5 pricing (docs/prices.md "Image generation")'],
        contextWindow: 32_000,
        maxOutputTokens: 6_240,
        capabilities: IMAGE,
        timeouts: IMAGE_TIMEOUTS,
        image: { outputTokens: GPT_IMAGE_TOKENS, maxImages: 10, outputFormats: ['png', 'jpeg', 'webp'], transparentBackground: true },
      }),
    ],
    equivalents: ['gemini-2.5-flash-image'],
  },
  {
    id: 'gemini-2.5-flash-image',
    kind: 'image',
    ownedBy: 'google',
    created: 1756166400,
    description: 'Gemini 2.5 Flash Image ("Nano Banana"): one PNG per request.',
    targets: [
      target({
        provider: 'gemini',
        upstreamModel: 'gemini-2.5-flash-image',
        price: [0.3, 30, IMAGES_READ_ON, 'ai.google.dev/gemini-api/docs/pricing (docs/prices.md "Image generation")'],
        contextWindow: 32_768,
        maxOutputTokens: 32_768,
        capabilities: IMAGE,
        timeouts: IMAGE_TIMEOUTS,
        image: {
          outputTokens: { '1024x1024': GEMINI_IMAGE_TOKENS, '1024x1536': GEMINI_IMAGE_TOKENS, '1536x1024': GEMINI_IMAGE_TOKENS },
          maxImages: 1,
          outputFormats: ['png'],
          transparentBackground: false,
        },
      }),
    ],
    equivalents: ['gpt-image-1'],
  },
];
