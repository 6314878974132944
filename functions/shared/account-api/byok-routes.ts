/**
 * `/v1/byok…`: the account's own provider keys (bring-your-own-key), through the dashboard only (JWT).
 * A key is shown by its last 4 characters only, never returned, never logged.
 */
import * as z from '../validation/zod';
import { forgetCachedByok } from '../accounts/byok/byok-credentials';
import { byokProvider, deleteByokKey, putByokKey, readByokEntries, setByokFallback, type ByokEntry } from '../accounts/byok/byok-store';
import type { GatewayRequest, JsonResult } from '../http/types';
import { parseJsonBody } from '../openai/parse-body';
import { byokProviderNames } from '../providers/manifest';
import { modelsServedBy } from '../catalogue/catalogue';
import type { AccountCaller } from './caller';
import { json } from './json';

export const byokPutBody = z.strictObject({ key: z.string(), allow_fallback: z.optional(z.boolean()) });
const patchBody = z.strictObject({ allow_fallback: z.boolean() });

/** The JSON view of one attached key. */
function view(provider: string, e: ByokEntry) {
  return { provider, last4: e.last4, allow_fallback: e.allowFallback, created_at: e.createdAt, updated_at: e.updatedAt ?? e.createdAt };
}

/**
 * `GET /v1/byok` → `{data:[{provider, last4, allow_fallback, created_at, updated_at}], providers:[…],
 * served_models:{<provider>:[model ids]}}`: `served_models` are the catalogue's public models each
 * provider's key serves (catalogue `modelsServedBy`), for the page to tell the truth.
 */
export async function listByokRoute(caller: AccountCaller): Promise<JsonResult> {
  const entries = await readByokEntries(caller.accountId);
  const allowed = byokProviderNames();
  const data = allowed.filter((p) => entries[p] !== undefined).map((p) => view(p, entries[p] as ByokEntry));
  return json({ data, providers: allowed, served_models: Object.fromEntries(allowed.map((p) => [p, modelsServedBy(p)])) });
}

/** `PUT /v1/byok/{provider}` `{key, allow_fallback?}` → `{data}`. */
export async function putByokRoute(caller: AccountCaller, name: string, req: GatewayRequest): Promise<JsonResult> {
  const provider = byokProvider(name);
  const body = parseJsonBody(req.body, byokPutBody);
  const entry = await putByokKey(caller.accountId, provider, body.key, body.allow_fallback ?? true);
  forgetCachedByok(caller.accountId);
  return json({ data: view(provider, entry) });
}

/** `PATCH /v1/byok/{provider}` `{allow_fallback}` → `{data}`. */
export async function patchByokRoute(caller: AccountCaller, name: string, req: GatewayRequest): Promise<JsonResult> {
  const provider = byokProvider(name);
  const body = parseJsonBody(req.body, patchBody);
  const entry = await setByokFallback(caller.accountId, provider, body.allow_fallback);
  forgetCachedByok(caller.accountId);
  return json({ data: view(provider, entry) });
}

/** `DELETE /v1/byok/{provider}` → `{deleted: true}`. */
export async function deleteByokRoute(caller: AccountCaller, name: string): Promise<JsonResult> {
  await deleteByokKey(caller.accountId, byokProvider(name));
  forgetCachedByok(caller.accountId);
  return json({ deleted: true });
}
