import { CATALOGUE, getModelAnyKind, type CatalogueEntry } from '../catalogue/catalogue';
import { InvalidRequestError, NotFoundError } from '../errors/gateway-errors';
import type { GatewayRequest, GatewayResult } from '../http/types';
import { displayName } from '../messages/model-list';
import { servedTargetAt } from '../routing/attempt-plan';
import { now } from '../time/clock';
import { inGeminiApi, withGoogleKey } from './gemini';
import { authenticateRequest } from './guard';

/**
 * `GET /v1beta/models` and `GET /v1beta/models/{model}`: the catalogue in the Gemini API's `Model`
 * shape (Google's reference, https://ai.google.dev/api/models): `{name:"models/<id>", baseModelId,
 * version, displayName, description, inputTokenLimit, outputTokenLimit (tokens),
 * supportedGenerationMethods, thinking}`, listed as `{models, nextPageToken?}` with Google's paging
 * (`pageSize` 1–1000, default 50; `pageToken` from the previous page). Only what this surface serves
 * is listed: chat models (`generateContent`, `streamGenerateContent`, `countTokens`) and embedding
 * models (`embedContent`, `batchEmbedContents`); image models are not Gemini API methods here.
 * The limits are those of the model's first target in force now, as `GET /v1/models` (app/models.ts).
 * Errors are Google's body (app/gemini.ts): 401 `UNAUTHENTICATED`, 404 `NOT_FOUND` for a model the
 * catalogue does not have (or one not served on this surface), 400 `INVALID_ARGUMENT` for a bad page.
 */

/** A model, as the Gemini API writes it. */
export interface GeminiModel {
  name: string;
  baseModelId: string;
  /** The catalogue's `created` day (`YYYY-MM-DD`, UTC): the catalogue keeps no version numbers. */
  version: string;
  displayName: string;
  description: string;
  inputTokenLimit: number;
  outputTokenLimit: number;
  supportedGenerationMethods: string[];
  thinking: boolean;
}

const METHODS: Partial<Record<CatalogueEntry['kind'], string[]>> = {
  chat: ['generateContent', 'streamGenerateContent', 'countTokens'],
  embedding: ['embedContent', 'batchEmbedContents'],
};

/** Google's default and largest `pageSize` (ai.google.dev/api/models#method:-models.list). */
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;

/** `…/models` (the list) or `…/models/{model}` (one model) under `/v1beta`, else undefined. */
export function geminiModelsRoute(path: string): { model?: string } | undefined {
  if (path === '/v1beta/models') return {};
  const m = /^\/v1beta\/models\/([^/:]+)$/.exec(path);
  if (m === null) return undefined;
  try {
    return { model: decodeURIComponent(m[1] ?? '') };
  } catch {
    return { model: m[1] ?? '' };
  }
}

/** Answers the list or one model (see the file comment). */
export function geminiModels(req: GatewayRequest, route: { model?: string }): Promise<GatewayResult> {
  return inGeminiApi(req, async () => {
    await authenticateRequest(withGoogleKey(req));
    const body = route.model === undefined ? modelPage(req.query) : geminiModelOf(servedEntry(route.model));
    return { kind: 'json', status: 200, headers: {}, body };
  });
}

/**
 * The entry a name (`gemini-2.5-flash`, `models/gemini-2.5-flash` or an alias, catalogue/aliases.ts) names.
 * @throws NotFoundError (404) when the catalogue has no such model or it is not served on this surface.
 */
function servedEntry(name: string): CatalogueEntry {
  const id = name.replace(/^models\//, '');
  const entry = getModelAnyKind(id);
  if (METHODS[entry.kind] === undefined)
    throw new NotFoundError(`models/${id} is not found for the Gemini API: it is an image model.`, { code: 'model_not_found' });
  return entry;
}

/**
 * One page of the list: `pageToken` is the index of the page's first model (an opaque string to clients).
 * @throws InvalidRequestError (400) for a `pageSize` outside 1–1000 or a malformed `pageToken`.
 */
function modelPage(query: string | undefined): { models: GeminiModel[]; nextPageToken?: string } {
  const params = new URLSearchParams(query ?? '');
  const size = params.has('pageSize') ? Number(params.get('pageSize')) : DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(size) || size < 1) throw new InvalidRequestError('pageSize: must be a positive integer', { param: 'pageSize' });
  const token = params.get('pageToken') ?? '';
  const from = token === '' ? 0 : Number(token);
  if (!Number.isInteger(from) || from < 0) throw new InvalidRequestError('pageToken: not a token this list gave', { param: 'pageToken' });
  const served = [...CATALOGUE.values()].filter((e) => METHODS[e.kind] !== undefined);
  const to = from + Math.min(size, MAX_PAGE_SIZE);
  const models = served.slice(from, to).map(geminiModelOf);
  return to < served.length ? { models, nextPageToken: String(to) } : { models };
}

/** A catalogue entry as a Gemini API `Model`. */
export function geminiModelOf(e: CatalogueEntry): GeminiModel {
  const first = e.targets[0];
  if (first === undefined) throw new Error(`catalogue entry ${e.id} has no target`);
  const [t] = servedTargetAt(first, e.id, CATALOGUE, now());
  return {
    name: `models/${e.id}`,
    baseModelId: e.id,
    version: new Date(e.created * 1000).toISOString().slice(0, 10),
    displayName: displayName(e.id),
    description: e.description,
    inputTokenLimit: t.contextWindow,
    outputTokenLimit: t.maxOutputTokens,
    supportedGenerationMethods: METHODS[e.kind] ?? [],
    thinking: t.capabilities.reasoning !== 'none',
  };
}
