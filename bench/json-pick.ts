/** Reading a nested field of parsed JSON without `any`. */

/** `value[k0][k1]…`, or undefined as soon as a step is not an object/array. */
export function pick(value: unknown, ...path: Array<string | number>): unknown {
  let at: unknown = value;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at;
}
