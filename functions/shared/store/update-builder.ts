/**
 * A small builder for DynamoDB update and condition expressions with generated placeholders, so the
 * hold, settle and balance-marker writes (billing/) and the auto top-up's (payments/) can add only the
 * parts a request needs (DynamoDB refuses unused values).
 */

/** Builds one Update item's expressions. */
export class UpdateBuilder {
  private readonly sets: string[] = [];
  private readonly removes: string[] = [];
  private readonly conditions: string[] = [];
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private n = 0;

  /** A placeholder for an attribute name (reserved words like `keys`, `status`, `window`). */
  name(attr: string): string {
    const found = Object.entries(this.names).find(([, v]) => v === attr);
    if (found) return found[0];
    const p = `#n${this.n++}`;
    this.names[p] = attr;
    return p;
  }

  /** A path of attribute names, e.g. `keys`, `<h16>`, `heldNanoUsd` → `#n0.#n1.#n2`. */
  path(...attrs: string[]): string {
    return attrs.map((a) => this.name(a)).join('.');
  }

  /** A placeholder for a value. */
  value(v: unknown): string {
    const p = `:v${this.n++}`;
    this.values[p] = v;
    return p;
  }

  set(clause: string): this {
    this.sets.push(clause);
    return this;
  }

  remove(path: string): this {
    this.removes.push(path);
    return this;
  }

  /** `path = if_not_exists(path, 0) + delta` (negative deltas subtract). */
  add(path: string, delta: number): this {
    return this.set(`${path} = if_not_exists(${path}, ${this.value(0)}) + ${this.value(delta)}`);
  }

  when(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /**
   * The expression fields of an Update item.
   * @throws Error when nothing is set or removed (a bug in the caller).
   */
  build(): {
    UpdateExpression: string;
    ConditionExpression?: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, unknown>;
  } {
    const parts: string[] = [];
    if (this.sets.length > 0) parts.push(`SET ${this.sets.join(', ')}`);
    if (this.removes.length > 0) parts.push(`REMOVE ${this.removes.join(', ')}`);
    if (parts.length === 0) throw new Error('UpdateBuilder: an update must set or remove something');
    return {
      UpdateExpression: parts.join(' '),
      ...(this.conditions.length > 0 ? { ConditionExpression: this.conditions.map((c) => `(${c})`).join(' AND ') } : {}),
      ...(Object.keys(this.names).length > 0 ? { ExpressionAttributeNames: this.names } : {}),
      ...(Object.keys(this.values).length > 0 ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}
