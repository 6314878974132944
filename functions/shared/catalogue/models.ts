import type { CatalogueEntryData, CatalogueTargetData, Capabilities } from './schema';

/**
 * The model catalogue as data: public name → ordered upstream targets (live ids), capabilities, limits
 * and equivalents for fallback. Typed by the schema and validated against `catalogueSchema` in
 * test/catalogue. Prices are not here: each target is priced by its key `provider:upstreamModel` from
 * the maintained price data (price-data.ts, generated from @pydantic/genai-prices; corrected in
 * price-overrides.ts), and displayed prices (upstream × 1.055) are computed by `buildCatalogue`.
 * A context window left out is the price data's; output limits are the providers' (docs/prices.md
 * "Models and limits").
 *
 * Facts: docs/providers.md (§2.8/§3.8/§4.2/§5.1/§6 lifecycles), docs/prices.md. Several ids the spec
 * names are retired upstream; each such entry says where it now goes, and retirements.ts moves a
 * target to its successor on the provider's date.
 */

// Files: PDF `file` parts, which OpenAI's vision models, Claude (document blocks) and Gemini (inline
// data) read. Audio: no catalogue model takes `input_audio` yet. OpenAI's needs its separate
// audio-preview models, and Gemini prices audio input above text ($1.00 vs $0.30 per 1M on 2.5 Flash,
// providers.md §8) while the ledger prices every prompt token alike: enabling it would bill below cost.
const TEXT: Capabilities = { tools: true, vision: false, reasoning: 'none', jsonMode: true, files: false, audio: false };
const VISION: Capabilities = { tools: true, vision: true, reasoning: 'none', jsonMode: true, files: true, audio: false };
const VISION_THINKING: Capabilities = { ...VISION, reasoning: 'exposed' };
// OpenAI's reasoning models (o-series, GPT-5 family): reasoning billed as output, never returned.
const VISION_HIDDEN: Capabilities = { ...VISION, reasoning: 'hidden' };
const EMBEDDING: Capabilities = { tools: false, vision: false, reasoning: 'none', jsonMode: false, files: false, audio: false };

/** One catalogue target, named field by field. */
type TargetOptions = CatalogueTargetData;

function target(options: TargetOptions): CatalogueTargetData {
  return options;
}

// Claude: cache prices, windows and output limits per model (docs/prices.md "Models and limits"). The
// 4.x models answer with a 200K window unless a 1M beta is asked for, which modelmux does not send.
const claude = (id: string, maxOut: number, contextWindow?: number) =>
  target({
    provider: 'anthropic',
    upstreamModel: id,
    ...(contextWindow !== undefined && { contextWindow }),
    maxOutputTokens: maxOut,
    capabilities: VISION_THINKING,
  });

const claudeSonnet46 = claude('claude-sonnet-4-6', 64_000, 200_000);
const claudeOpus46 = claude('claude-opus-4-6', 64_000, 200_000);
const claudeOpus55 = claude('claude-opus-5-5', 128_000);
const claudeSonnet55 = claude('claude-sonnet-5-5', 128_000);
const gemini25FlashLite = target({
  provider: 'gemini',
  upstreamModel: 'gemini-2.5-flash-lite',
  contextWindow: 1_048_576,
  maxOutputTokens: 65_536,
  capabilities: VISION,
});
// Gemini 2.5 Flash and Pro think by default (Pro always; providers.md §3.8): `thinking` time limits.
const gemini25Flash = target({
  provider: 'gemini',
  upstreamModel: 'gemini-2.5-flash',
  contextWindow: 1_048_576,
  maxOutputTokens: 65_536,
  capabilities: VISION_THINKING,
  latency: 'thinking',
});
// Gemini 2.5 Pro bills the whole request at $2.50 / $15 once the prompt is over 200K tokens (the price
// data's tier; providers.md §8).
const gemini25Pro = target({
  provider: 'gemini',
  upstreamModel: 'gemini-2.5-pro',
  contextWindow: 1_048_576,
  maxOutputTokens: 65_536,
  capabilities: VISION_THINKING,
  latency: 'thinking',
});
// Gemini 3.x: thinking always on (levels instead of budgets), thought signatures on function calls
// (providers/gemini/thought-signature.ts); 1M window, 64K output (docs/prices.md "Models and limits").
const gemini3 = (id: string) =>
  target({ provider: 'gemini', upstreamModel: id, contextWindow: 1_048_576, maxOutputTokens: 65_536, capabilities: VISION_THINKING, latency: 'thinking' });
// DeepSeek: `deepseek-flash` is DeepSeek-V4.1-Flash from 2026-09-10 (the legacy deepseek-v4-flash is
// served by it); 1M window, thinking switched per request body (providers.md §4.2, §8). DeepSeek takes up
// to 384K output tokens, but the cap here is also the output a request without `max_tokens` is held
// for: 384K at the peak price would be a $0.49 hold on every such request (a 402 for a small balance),
// so the caps stay at 8K non-thinking / 32K thinking until a default output budget is its own field.
const DEEPSEEK_MAX_OUTPUT = 8_192;
const DEEPSEEK_THINKING_MAX_OUTPUT = 32_768;
// V4.1-Flash reads images too, but no image-token rule for DeepSeek is on record (usage/media-tokens.ts),
// so a hold could not bound an image's prompt tokens: vision stays off until one is.
const deepseekFlash = target({
  provider: 'deepseek',
  upstreamModel: 'deepseek-flash',
  maxOutputTokens: DEEPSEEK_MAX_OUTPUT,
  capabilities: TEXT,
  upstreamParams: { thinking: { type: 'disabled' } },
});
const deepseekFlashThinking = target({
  provider: 'deepseek',
  upstreamModel: 'deepseek-flash',
  maxOutputTokens: DEEPSEEK_THINKING_MAX_OUTPUT,
  capabilities: { ...TEXT, reasoning: 'exposed' },
  upstreamParams: { thinking: { type: 'enabled' } },
  latency: 'thinking',
});
// MiniMax's passive cache on its OpenAI-compatible API bills hits at the read price and writes at the
// input price (no write bucket: the price data's $0.375 write is its explicit Anthropic-API cache's,
// an endpoint modelmux does not call: `passiveCache` drops it; docs/prices.md).
const minimax = (id: string) =>
  // M2.x always reasons (thinking cannot be disabled, providers.md §5.2): `thinking` time limits.
  target({
    provider: 'minimax',
    upstreamModel: id,
    contextWindow: 204_800,
    maxOutputTokens: 131_072,
    passiveCache: true,
    capabilities: { ...TEXT, reasoning: 'exposed' },
    latency: 'thinking',
  });
const openaiEmbedding = (id: string, dimensions: number, fixed?: { fixedDimensions: true }) =>
  target({
    provider: 'openai',
    upstreamModel: id,
    contextWindow: 8_192,
    maxOutputTokens: 1,
    capabilities: EMBEDDING,
    dimensions,
    ...fixed,
  });
// OpenAI's GPT-5 family and o-series: reasoning hidden and billed as output; `max_completion_tokens`,
// no sampling parameters (providers/openai-compatible/o-series.ts). Windows from the price data.
const openaiReasoning = (id: string, maxOut: number, capabilities: Capabilities = VISION_HIDDEN) =>
  target({ provider: 'openai', upstreamModel: id, maxOutputTokens: maxOut, capabilities });

// Image models (docs/prices.md "Image generation", read 2026-11-27). Prompts are text; the images
// come back as output tokens, billed like any output: tokens × the image output price.
const IMAGE: Capabilities = { tools: false, vision: false, reasoning: 'none', jsonMode: false, files: false, audio: false };
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

// Equivalence classes for fallback, by tier (docs/prices.md "Models and limits"): a model falls back
// within its tier, never to a cheaper tier unless the caller's `models` list says so.
const OPUS_TIER = ['claude-opus-5-5', 'claude-opus-5', 'claude-opus-4-6', 'gpt-5.5', 'gemini-3.1-pro-preview'];
const SONNET_TIER = ['claude-sonnet-5-5', 'claude-sonnet-5', 'claude-sonnet-4-6', 'gpt-5', 'gemini-2.5-pro'];
const SMALL_TIER = ['claude-haiku-5-5', 'claude-haiku-4-5', 'gpt-5-mini', 'gemini-3.5-flash'];
/** A tier's other members, for a model of that tier. */
const others = (tier: readonly string[], id: string): string[] => tier.filter((m) => m !== id);

/** The catalogue (56 models: 49 chat, 5 embedding, 2 image). */
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
        contextWindow: 200_000,
        maxOutputTokens: 100_000,
        capabilities: { ...TEXT, reasoning: 'hidden' },
      }),
    ],
    equivalents: ['deepseek-r1'],
  },
  {
    id: 'gpt-5',
    kind: 'chat',
    ownedBy: 'openai',
    created: 1754524800,
    description: 'GPT-5 (reasoning hidden, billed as output).',
    targets: [openaiReasoning('gpt-5', 128_000)],
    equivalents: others(SONNET_TIER, 'gpt-5'),
  },
  {
    id: 'gpt-5-mini',
    kind: 'chat',
    ownedBy: 'openai',
    created: 1754524800,
    description: 'GPT-5 mini (reasoning hidden, billed as output).',
    targets: [openaiReasoning('gpt-5-mini', 128_000)],
    equivalents: others(SMALL_TIER, 'gpt-5-mini'),
  },
  {
    id: 'gpt-5-nano',
    kind: 'chat',
    ownedBy: 'openai',
    created: 1754524800,
    description: 'GPT-5 nano: the smallest GPT-5 (reasoning hidden, billed as output).',
    targets: [openaiReasoning('gpt-5-nano', 128_000)],
    equivalents: ['gpt-5-mini'],
  },
  {
    id: 'gpt-5.5',
    kind: 'chat',
    ownedBy: 'openai',
    created: 1776988800,
    description: 'GPT-5.5 (reasoning hidden; prompts over 272K tokens priced at the long-context tier).',
    targets: [openaiReasoning('gpt-5.5', 128_000)],
    equivalents: others(OPUS_TIER, 'gpt-5.5'),
  },
  {
    id: 'o3',
    kind: 'chat',
    ownedBy: 'openai',
    created: 1744761600,
    description: 'o3 reasoning model (reasoning hidden, billed as output).',
    targets: [openaiReasoning('o3', 100_000)],
    equivalents: ['o4-mini', 'gpt-5'],
  },
  {
    id: 'o4-mini',
    kind: 'chat',
    ownedBy: 'openai',
    created: 1744761600,
    description: 'o4-mini reasoning model (reasoning hidden, billed as output).',
    targets: [openaiReasoning('o4-mini', 100_000)],
    equivalents: ['o3-mini', 'gpt-5-mini'],
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
    targets: [claudeSonnet46],
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
    targets: [claude('claude-sonnet-4-5', 64_000), claudeSonnet46],
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
    equivalents: OPUS_TIER,
  },
  {
    id: 'claude-opus-4-5',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1761955200,
    description: 'Claude Opus 4.5.',
    targets: [claude('claude-opus-4-5', 64_000), claudeOpus46],
    equivalents: OPUS_TIER,
  },
  {
    id: 'claude-opus-4-6',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1771200000,
    description: 'Claude Opus 4.6.',
    targets: [claudeOpus46],
    equivalents: others(OPUS_TIER, 'claude-opus-4-6'),
  },
  {
    id: 'claude-haiku-4-5',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1759276800,
    description: 'Claude Haiku 4.5: fast and cheap.',
    targets: [claude('claude-haiku-4-5', 64_000)],
    equivalents: ['gpt-4o-mini'],
    // Hedged after the `standard` p95 (3 s; Haiku 4.5's median first token is ~1.4 s, routing/timeouts.ts [a]).
    hedge: {},
  },
  {
    id: 'claude-opus-5-5',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1790380800,
    description: "Claude Opus 5.5: Anthropic's most capable model (Claude Code's default).",
    targets: [claudeOpus55],
    equivalents: others(OPUS_TIER, 'claude-opus-5-5'),
  },
  {
    id: 'claude-opus-5',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1781740800,
    description: 'Claude Opus 5.',
    targets: [claude('claude-opus-5', 128_000)],
    equivalents: others(OPUS_TIER, 'claude-opus-5'),
  },
  {
    id: 'claude-opus-4-8',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1778112000,
    description: 'Claude Opus 4.8.',
    targets: [claude('claude-opus-4-8', 128_000)],
    equivalents: OPUS_TIER,
  },
  {
    id: 'claude-opus-4-7',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1776211200,
    description: 'Claude Opus 4.7.',
    targets: [claude('claude-opus-4-7', 128_000)],
    equivalents: OPUS_TIER,
  },
  {
    id: 'claude-sonnet-5-5',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1790380800,
    description: 'Claude Sonnet 5.5.',
    targets: [claudeSonnet55],
    equivalents: others(SONNET_TIER, 'claude-sonnet-5-5'),
  },
  {
    id: 'claude-sonnet-5',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1781740800,
    description: 'Claude Sonnet 5.',
    targets: [claude('claude-sonnet-5', 128_000)],
    equivalents: others(SONNET_TIER, 'claude-sonnet-5'),
  },
  {
    id: 'claude-haiku-5-5',
    kind: 'chat',
    ownedBy: 'anthropic',
    created: 1790380800,
    description: 'Claude Haiku 5.5: fast and cheap (prompts over 100K tokens priced at the long-context tier).',
    targets: [claude('claude-haiku-5-5', 128_000)],
    equivalents: others(SMALL_TIER, 'claude-haiku-5-5'),
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
  {
    id: 'gemini-3.5-flash',
    kind: 'chat',
    ownedBy: 'google',
    created: 1785542400,
    description: 'Gemini 3.5 Flash (thinking).',
    targets: [gemini3('gemini-3.5-flash')],
    equivalents: others(SMALL_TIER, 'gemini-3.5-flash'),
  },
  {
    id: 'gemini-3.5-flash-lite',
    kind: 'chat',
    ownedBy: 'google',
    created: 1785542400,
    description: 'Gemini 3.5 Flash-Lite.',
    targets: [gemini3('gemini-3.5-flash-lite')],
    equivalents: ['gemini-3.5-flash', 'gpt-5-mini'],
  },
  {
    id: 'gemini-3.8-flash',
    kind: 'chat',
    ownedBy: 'google',
    created: 1793577600,
    description: "Gemini 3.8 Flash (Gemini CLI's default; its price doubles from 2027-01-01).",
    targets: [gemini3('gemini-3.8-flash')],
    equivalents: ['gemini-3.5-flash', 'gpt-5-mini'],
  },
  {
    id: 'gemini-3-flash-preview',
    kind: 'chat',
    ownedBy: 'google',
    created: 1765843200,
    description: 'Gemini 3 Flash preview.',
    targets: [gemini3('gemini-3-flash-preview')],
    equivalents: ['gemini-3.5-flash', 'gpt-5-mini'],
  },
  {
    id: 'gemini-3.1-flash-lite',
    kind: 'chat',
    ownedBy: 'google',
    created: 1772323200,
    description: 'Gemini 3.1 Flash-Lite.',
    targets: [gemini3('gemini-3.1-flash-lite')],
    equivalents: ['gemini-3.5-flash-lite', 'gpt-5-nano'],
  },
  {
    id: 'gemini-3.1-pro-preview',
    kind: 'chat',
    ownedBy: 'google',
    created: 1771459200,
    description: 'Gemini 3.1 Pro preview (prompts over 200K tokens priced at the long-context tier).',
    targets: [gemini3('gemini-3.1-pro-preview')],
    equivalents: others(OPUS_TIER, 'gemini-3.1-pro-preview'),
  },
  {
    id: 'gemini-3.1-pro-preview-customtools',
    kind: 'chat',
    ownedBy: 'google',
    created: 1771459200,
    description: 'Gemini 3.1 Pro preview tuned for custom tools (what Gemini CLI asks for).',
    targets: [gemini3('gemini-3.1-pro-preview-customtools')],
    equivalents: ['gemini-3.1-pro-preview'],
  },
  // ── DeepSeek ────────────────────────────────────────────────────────────────────────────────────
  {
    id: 'deepseek-flash',
    kind: 'chat',
    ownedBy: 'deepseek',
    created: 1788998400,
    description: 'DeepSeek-V4.1-Flash (non-thinking; peak hours on weekdays cost double upstream and here).',
    targets: [deepseekFlash],
    equivalents: ['deepseek-v4-pro', 'gpt-5-mini'],
  },
  {
    // deepseek-chat (V3) was retired after 2026-07-24: V3's successor is V4-Flash in non-thinking mode.
    id: 'deepseek-v3',
    kind: 'chat',
    ownedBy: 'deepseek',
    created: 1735084800,
    description: 'DeepSeek V3 class (served by DeepSeek V4.1-Flash, non-thinking; V3 is retired upstream).',
    targets: [deepseekFlash],
    equivalents: ['llama-3-70b', 'gpt-4o-mini'],
  },
  {
    // deepseek-reasoner (R1) was retired after 2026-07-24: served by V4.1-Flash in thinking mode, which
    // returns reasoning_content like R1 did.
    id: 'deepseek-r1',
    kind: 'chat',
    ownedBy: 'deepseek',
    created: 1737331200,
    description: 'DeepSeek R1 reasoning class (served by DeepSeek V4.1-Flash, thinking mode; R1 is retired upstream).',
    targets: [deepseekFlashThinking],
    equivalents: ['o3-mini'],
  },
  {
    id: 'deepseek-chat',
    kind: 'chat',
    ownedBy: 'deepseek',
    created: 1735084800,
    description: 'DeepSeek Chat (the retired alias now means V4.1-Flash, non-thinking).',
    targets: [deepseekFlash],
    equivalents: ['deepseek-v3', 'gpt-4o-mini'],
  },
  {
    // DeepSeek Coder was merged into the chat model (V2.5, 2024); the live coder is V4-Flash.
    id: 'deepseek-coder',
    kind: 'chat',
    ownedBy: 'deepseek',
    created: 1735084800,
    description: 'DeepSeek Coder (merged into DeepSeek chat upstream; served by V4.1-Flash).',
    targets: [deepseekFlash],
    equivalents: ['gpt-4o-mini'],
  },
  {
    id: 'deepseek-v4-pro',
    kind: 'chat',
    ownedBy: 'deepseek',
    created: 1776988800,
    description: 'DeepSeek V4-Pro (non-thinking; peak hours on weekdays cost double upstream and here).',
    targets: [
      target({
        provider: 'deepseek',
        upstreamModel: 'deepseek-v4-pro',
        maxOutputTokens: DEEPSEEK_THINKING_MAX_OUTPUT,
        capabilities: TEXT,
        upstreamParams: { thinking: { type: 'disabled' } },
      }),
    ],
    equivalents: ['deepseek-flash'],
  },
  // ── MiniMax ─────────────────────────────────────────────────────────────────────────────────────
  {
    id: 'minimax',
    kind: 'chat',
    ownedBy: 'minimax',
    created: 1773792000,
    description: 'MiniMax M2.7 reasoning model.',
    targets: [minimax('MiniMax-M2.7'), minimax('MiniMax-M2.5')],
    equivalents: ['deepseek-r1'],
  },
  {
    id: 'minimax-m2.7',
    kind: 'chat',
    ownedBy: 'minimax',
    created: 1773792000,
    description: 'MiniMax M2.7 reasoning model.',
    targets: [minimax('MiniMax-M2.7'), minimax('MiniMax-M2.5')],
    equivalents: ['deepseek-r1'],
  },
  {
    id: 'minimax-m2.7-highspeed',
    kind: 'chat',
    ownedBy: 'minimax',
    created: 1773792000,
    description: 'MiniMax M2.7 highspeed.',
    targets: [minimax('MiniMax-M2.7-highspeed')],
    equivalents: ['minimax'],
  },
  {
    id: 'minimax-m2.5',
    kind: 'chat',
    ownedBy: 'minimax',
    created: 1770854400,
    description: 'MiniMax M2.5.',
    targets: [minimax('MiniMax-M2.5')],
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
        contextWindow: 131_072,
        maxOutputTokens: 8_192,
        capabilities: TEXT,
      }),
      target({
        provider: 'deepinfra',
        upstreamModel: 'meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo',
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
        contextWindow: 131_072,
        maxOutputTokens: 8_192,
        capabilities: TEXT,
      }),
      target({
        provider: 'deepinfra',
        upstreamModel: 'meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo',
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
    targets: [openaiEmbedding('text-embedding-3-small', 1536)],
    equivalents: [],
  },
  {
    id: 'text-embedding-3-small',
    kind: 'embedding',
    ownedBy: 'openai',
    created: 1705948997,
    description: 'OpenAI text-embedding-3-small (1536 dims).',
    targets: [openaiEmbedding('text-embedding-3-small', 1536)],
    equivalents: [],
  },
  {
    id: 'text-embedding-3-large',
    kind: 'embedding',
    ownedBy: 'openai',
    created: 1705953180,
    description: 'OpenAI text-embedding-3-large (3072 dims).',
    targets: [openaiEmbedding('text-embedding-3-large', 3072)],
    equivalents: [],
  },
  {
    id: 'text-embedding-ada-002',
    kind: 'embedding',
    ownedBy: 'openai',
    created: 1671217299,
    description: 'OpenAI text-embedding-ada-002 (1536 dims).',
    // ada-002 has one vector length: OpenAI answers 400 "This model does not support specifying dimensions."
    targets: [openaiEmbedding('text-embedding-ada-002', 1536, { fixedDimensions: true })],
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
