/**
 * Holds this container is still writing (hold.ts `placeHold`: counted from just before the write until
 * it is answered — granted, refused or failed), per account item: what a prediction (hold.ts
 * `holdPredicted`) must count as already taken from the item's free tokens, credit and in-flight count,
 * and from each key's entry (`keys.<h16>`: its spend-limit allowance and in-flight count). Without the
 * keys' part a burst on a key with a small spend limit predicts every hold the account's credit could
 * cover and calls upstreams for requests the key's limit then refuses. In memory, per container.
 */
import type { KeyState, ShardState } from './account-state';
import type { HoldSpec } from './hold-plan';

/** What one key's holds being written take: nano-USD of its allowance, and how many they are. */
interface KeyTaken {
  nanoUsd: number;
  requests: number;
}

/** What the holds being written on one account item take: tokens, nano-USD, how many, and per key entry. */
interface Taken extends KeyTaken {
  freeTokens: number;
  keys: Map<string, KeyTaken>;
}

const unwritten = new Map<string, Taken>();

/**
 * Counts one hold being written on account item `pk` for key entry `h16` (`sign` 1, before the write)
 * or no longer (`sign` -1, once the write is answered, with the same spec).
 */
export function countUnwritten(pk: string, h16: string, spec: HoldSpec, sign: 1 | -1): void {
  const t = unwritten.get(pk) ?? { nanoUsd: 0, freeTokens: 0, requests: 0, keys: new Map<string, KeyTaken>() };
  t.nanoUsd += sign * spec.nanoUsd;
  t.freeTokens += sign * spec.freeTokens;
  t.requests += sign;
  const k = t.keys.get(h16) ?? { nanoUsd: 0, requests: 0 };
  k.nanoUsd += sign * spec.nanoUsd;
  k.requests += sign;
  if (k.requests === 0) t.keys.delete(h16);
  else t.keys.set(h16, k);
  if (t.requests === 0) unwritten.delete(pk);
  else unwritten.set(pk, t);
}

/**
 * `state` of account item `pk` less the holds being written on it, as hold-plan.ts `planHold` reads it:
 * credit and free tokens less theirs, in-flight counts plus theirs, and each key's entry with their
 * nano-USD added to `heldNanoUsd` and taken from `leftNanoUsd` (when the entry has one: a key with a
 * spend limit in its current window), as hold.ts `applyHold` will once they are written. A copy:
 * `state` (this container's view) is not changed; `state` itself when nothing is being written.
 */
export function lessUnwritten(pk: string, state: ShardState): ShardState {
  const t = unwritten.get(pk);
  if (t === undefined) return state;
  let keys = state.keys;
  if (keys !== undefined && t.keys.size > 0) {
    keys = { ...keys };
    for (const [h16, k] of t.keys) {
      const key: KeyState | undefined = keys[h16];
      if (key === undefined) continue;
      keys[h16] = {
        ...key,
        heldNanoUsd: key.heldNanoUsd + k.nanoUsd,
        ...(key.leftNanoUsd !== undefined ? { leftNanoUsd: key.leftNanoUsd - k.nanoUsd } : {}),
        inflight: (key.inflight ?? 0) + k.requests,
      };
    }
  }
  return {
    ...state,
    creditNanoUsd: state.creditNanoUsd - t.nanoUsd,
    freeTokens: state.freeTokens - t.freeTokens,
    inflight: (state.inflight ?? 0) + t.requests,
    keys,
  };
}
