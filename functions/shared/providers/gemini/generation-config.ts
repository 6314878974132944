import type { ChatCompletionRequest } from '../../openai/chat-request';
import type { CatalogueTarget } from '../../catalogue/catalogue';
import type { GeminiGenerationConfig, GeminiThinkingConfig } from './wire-request';

/**
 * OpenAI sampling and output fields → Gemini `generationConfig` (Gemini API, providers.md §3.2, §7):
 * temperature, top_p → topP, max_completion_tokens ?? max_tokens → maxOutputTokens (capped at the
 * target's output limit, tokens), stop → stopSequences, n → candidateCount, seed,
 * presence/frequency_penalty → presencePenalty/frequencyPenalty.
 *
 * `response_format`: `json_object` → `responseMimeType: "application/json"`; `json_schema` adds
 * `responseJsonSchema` with the client's schema as is. providers.md §3.2 lists `responseJsonSchema`
 * beside the older `responseSchema`; it takes real JSON Schema (`$ref`, `$defs`,
 * `additionalProperties`…), so nothing has to be translated or dropped, unlike tool parameters.
 *
 * Not mapped (Gemini has no equivalent we use): logit_bias, parallel_tool_calls, and the OpenAI-only
 * fields (store, metadata, user, service_tier…). `logprobs` is refused before this (request.ts).
 * `candidateCount` (n) is up to 8 on Gemini 2.5 [3P: router-for-me/CLIProxyAPI#879]; a larger n
 * gets Gemini's own 400.
 */
export function toGenerationConfig(req: ChatCompletionRequest, target: CatalogueTarget): GeminiGenerationConfig {
  const cfg: GeminiGenerationConfig = { temperature: req.temperature };
  if (req.top_p != null) cfg.topP = req.top_p;
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens != null) cfg.maxOutputTokens = Math.min(maxTokens, target.maxOutputTokens);
  if (req.stop != null) {
    const stops = typeof req.stop === 'string' ? [req.stop] : req.stop;
    if (stops.length > 0) cfg.stopSequences = stops;
  }
  if (req.n != null) cfg.candidateCount = req.n;
  if (req.seed != null) cfg.seed = req.seed;
  if (req.presence_penalty != null) cfg.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty != null) cfg.frequencyPenalty = req.frequency_penalty;

  const format = req.response_format;
  if (format?.type === 'json_object' || format?.type === 'json_schema') cfg.responseMimeType = 'application/json';
  if (format?.type === 'json_schema' && format.json_schema.schema !== undefined) cfg.responseJsonSchema = format.json_schema.schema;

  const thinking = withBudget(toThinkingConfig(req.reasoning_effort, target), req.reasoning?.max_tokens);
  if (thinking !== undefined) cfg.thinkingConfig = thinking;
  return cfg;
}

/** OpenRouter's `reasoning.max_tokens` (docs/openrouter.md §1) replaces the effort's budget where thinking is on. */
function withBudget(cfg: GeminiThinkingConfig | undefined, maxTokens: number | null | undefined): GeminiThinkingConfig | undefined {
  if (cfg === undefined || maxTokens == null || cfg.thinkingBudget === 0) return cfg;
  return { ...cfg, thinkingBudget: Math.min(maxTokens, BUDGET_HIGH) };
}

/** Thinking budgets (tokens) per OpenAI effort: Gemini's own compatibility mapping (providers.md §3.9). */
const BUDGET_LOW = 1024;
const BUDGET_MEDIUM = 8192;
/** 24576 is the Flash maximum (§3.2); Pro accepts up to 32768 but Flash would reject more. */
const BUDGET_HIGH = 24576;

/**
 * Only for targets whose reasoning the catalogue marks `exposed` (Gemini 2.5 Flash/Pro): then
 * thoughts are always asked for (`includeThoughts`), because `exposed` promises `reasoning_content`,
 * and `reasoning_effort` sets the budget. Other targets get no thinkingConfig (the model's default).
 *
 * `none` → budget 0, which disables thinking; Gemini 2.5 Pro refuses 0 with a 400 that reaches the
 * client, as with Google's own compatibility layer (§3.9). `minimal` has no Gemini level: it gets the
 * `low` budget; `xhigh`/`max` get the `high` one.
 */
export function toThinkingConfig(effort: ChatCompletionRequest['reasoning_effort'], target: CatalogueTarget): GeminiThinkingConfig | undefined {
  if (target.capabilities.reasoning !== 'exposed') return undefined;
  switch (effort) {
    case null:
    case undefined:
      return { includeThoughts: true };
    case 'none':
      return { thinkingBudget: 0 };
    case 'minimal':
    case 'low':
      return { thinkingBudget: BUDGET_LOW, includeThoughts: true };
    case 'medium':
      return { thinkingBudget: BUDGET_MEDIUM, includeThoughts: true };
    case 'high':
    case 'xhigh':
    case 'max':
      return { thinkingBudget: BUDGET_HIGH, includeThoughts: true };
    default:
      return effort satisfies never;
  }
}
