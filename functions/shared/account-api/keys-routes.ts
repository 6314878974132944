/**
 * `/v1/keys…`: create (the key shown once), list, get, update (name, disabled, limit, limit_reset) and
 * delete the caller's API keys (OpenRouter's key management shape). Another account's key hash is a
 * 404 here, exactly like a hash that does not exist.
 */
import * as z from '../validation/zod';
import { LIMIT_RESETS } from '../accounts/keys/api-key-item';
import { queryAccountKeys } from '../accounts/keys/api-key-store';
import { getOwnedKey, readKeyStates } from '../accounts/keys/api-key-store';
import { createKey } from '../accounts/keys/api-key-store';
import { deleteKey } from '../accounts/keys/api-key-update';
import { updateKey, type KeyPatch } from '../accounts/keys/api-key-update';
import { usdToNanoUsd } from '../money/money';
import type { GatewayRequest, JsonResult } from '../http/types';
import { InvalidRequestError } from '../errors/gateway-errors';
import { parseJsonBody } from '../openai/parse-body';
import type { AccountCaller } from './caller';
import { json } from './json';
import { toKeyRecord } from './key-record';

/** A USD amount (≥ 0, at most 9 decimals) or null. */
const usdLimit = z.nullable(z.number().check(z.nonnegative()));
const limitReset = z.nullable(z.enum(LIMIT_RESETS));

export const keyCreateBody = z.strictObject({ name: z.string(), limit: z.optional(usdLimit), limit_reset: z.optional(limitReset) });
const patchBody = z.strictObject({
  name: z.optional(z.string()),
  disabled: z.optional(z.boolean()),
  limit: z.optional(usdLimit),
  limit_reset: z.optional(limitReset),
});

/** USD (JSON number) → nano-USD, exactly. @throws InvalidRequestError (400, param `limit`). */
function limitNanoUsd(value: number | null | undefined): number | null | undefined {
  if (value === undefined || value === null) return value;
  try {
    return usdToNanoUsd(value);
  } catch {
    throw new InvalidRequestError('`limit` must be a USD amount with at most 9 decimals.', { param: 'limit', code: 'invalid_value' });
  }
}

/** `POST /v1/keys` → 201 `{key, data: KeyRecord}`. */
export async function createKeyRoute(caller: AccountCaller, req: GatewayRequest): Promise<JsonResult> {
  const body = parseJsonBody(req.body, keyCreateBody);
  const limit = limitNanoUsd(body.limit) ?? undefined;
  if (limit === undefined && body.limit_reset != null) {
    throw new InvalidRequestError('limit_reset needs a limit: set `limit` too.', { param: 'limit_reset' });
  }
  const created = await createKey(caller.accountId, body.name, {
    ...(limit === undefined ? {} : { limitNanoUsd: limit }),
    ...(body.limit_reset ? { limitReset: body.limit_reset } : {}),
  });
  return json({ key: created.key, data: toKeyRecord(created.item, created.state) }, 201);
}

/** `GET /v1/keys` → `{data: KeyRecord[]}`, not deleted, newest first. */
export async function listKeysRoute(caller: AccountCaller): Promise<JsonResult> {
  const items = (await queryAccountKeys(caller.accountId)).filter((k) => k.status !== 'deleted').reverse();
  const states = await readKeyStates(
    caller.accountId,
    items.map((k) => k.keyHash),
  );
  return json({ data: items.map((k) => toKeyRecord(k, states.get(k.keyHash))) });
}

/** `GET /v1/keys/{hash}` → `{data: KeyRecord}`. */
export async function getKeyRoute(caller: AccountCaller, hash: string): Promise<JsonResult> {
  const item = await getOwnedKey(caller.accountId, hash);
  const states = await readKeyStates(caller.accountId, [hash]);
  return json({ data: toKeyRecord(item, states.get(hash)) });
}

/** `PATCH /v1/keys/{hash}` with any of `{name, disabled, limit, limit_reset}` → `{data: KeyRecord}`. */
export async function patchKeyRoute(caller: AccountCaller, hash: string, req: GatewayRequest): Promise<JsonResult> {
  const body = parseJsonBody(req.body, patchBody);
  const patch: KeyPatch = {};
  if (body.name !== undefined) patch.name = body.name;
  if (body.disabled !== undefined) patch.disabled = body.disabled;
  if (body.limit !== undefined) patch.limitNanoUsd = limitNanoUsd(body.limit) ?? null;
  if (body.limit_reset !== undefined) patch.limitReset = body.limit_reset;
  const { item, state } = await updateKey(caller.accountId, hash, patch);
  return json({ data: toKeyRecord(item, state) });
}

/** `DELETE /v1/keys/{hash}` → `{deleted: true}`. */
export async function deleteKeyRoute(caller: AccountCaller, hash: string): Promise<JsonResult> {
  await deleteKey(caller.accountId, hash);
  return json({ deleted: true });
}
