import { CATALOGUE, findModel, type Catalogue } from '../catalogue/catalogue';
import { NotFoundError } from '../errors/gateway-errors';

/**
 * The catalogue chat model a Messages request's `model` names. Claude Code and the Anthropic SDKs send
 * Anthropic's own ids: dated snapshots (`claude-sonnet-4-5-20250929`, `claude-haiku-4-5-20251001`)
 * and `-latest` aliases (`claude-3-5-sonnet-latest`) (Anthropic models overview,
 * docs/anthropic-messages.md). A name the catalogue has (an id or an alias, catalogue/aliases.ts) is
 * taken as is; otherwise the same name without
 * its date suffix (`-YYYYMMDD`) or `-latest` suffix, when the catalogue has that.
 * @throws NotFoundError (404; `not_found_error` on this API) naming the model, when none matches a chat model.
 */
export function resolveMessagesModel(name: string, catalogue: Catalogue = CATALOGUE): string {
  for (const candidate of [name, name.replace(/-\d{8}$/, ''), name.replace(/-latest$/, '')]) {
    const entry = findModel(candidate, catalogue);
    if (entry?.kind === 'chat') return entry.id;
  }
  throw new NotFoundError(`model: ${name} (no chat model of that name in the modelmux catalogue; GET /v1/models lists them)`, {
    param: 'model',
    code: 'model_not_found',
  });
}
