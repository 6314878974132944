/**
 * Stripe's request encoding: `application/x-www-form-urlencoded` with bracketed keys for nesting
 * (`line_items[0][price_data][unit_amount]=1000`, `expand[]=latest_charge`), as the `stripe` SDK
 * writes it (stripe-node `utils.stringifyRequestData`, qs with `arrayFormat: 'indices'`). Decoded into
 * plain objects; numeric indices make arrays.
 */

/** A decoded form value. */
export type FormValue = string | FormValue[] | { [k: string]: FormValue };

/** Decodes a Stripe form body (or a query string) into nested objects and arrays. */
export function decodeStripeForm(body: string): Record<string, FormValue> {
  const root: Record<string, FormValue> = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const path = keyPath(rawKey);
    let node: Record<string, FormValue> | FormValue[] = root;
    path.forEach((part, i) => {
      const last = i === path.length - 1;
      const container = node as Record<string, FormValue>;
      const k = part === '' ? String((node as FormValue[]).length ?? Object.keys(node).length) : part;
      if (last) {
        container[k] = value;
        return;
      }
      const nextIsIndex = /^\d*$/.test(path[i + 1] ?? '');
      container[k] ??= nextIsIndex ? [] : {};
      node = container[k] as Record<string, FormValue> | FormValue[];
    });
  }
  return root;
}

/** `a[b][0]` → `['a', 'b', '0']`. */
function keyPath(key: string): string[] {
  const first = key.indexOf('[');
  if (first < 0) return [key];
  const parts = [key.slice(0, first)];
  for (const m of key.slice(first).matchAll(/\[([^\]]*)\]/g)) parts.push(m[1] ?? '');
  return parts;
}

/** A string field, or undefined. */
export function str(v: FormValue | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** An object field, or `{}`. */
export function obj(v: FormValue | undefined): Record<string, FormValue> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {};
}

/** A list field (array, or an object with index keys), or `[]`. */
export function list(v: FormValue | undefined): FormValue[] {
  if (Array.isArray(v)) return v;
  if (typeof v === 'object' && v !== null) return Object.values(v);
  return [];
}

/** String metadata (`metadata[k]=v`). */
export function metadataOf(v: FormValue | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(obj(v)).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
