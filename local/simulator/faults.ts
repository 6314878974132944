/**
 * Injected faults: a registry consulted once per provider request, and the validation of faults
 * that arrive as JSON through the control endpoint.
 */
import { asNumber, isObject } from './json-narrowing.js';
import { SIM_PROVIDERS, type Fault, type FaultMatch, type SimProvider } from './types.js';

interface Entry {
  match: FaultMatch;
  fault: Fault;
  remaining: number;
}

/** Ordered faults with use counts. The earliest-registered match with uses left applies. */
export class FaultRegistry {
  private entries: Entry[] = [];

  /** Register `fault` for requests matching `match`, for `times` requests (default Infinity). */
  add(match: FaultMatch, fault: Fault, times: number = Infinity): void {
    if (!(times > 0)) return;
    this.entries.push({ match: { ...match }, fault: { ...fault }, remaining: times });
  }

  clear(): void {
    this.entries = [];
  }

  /** The fault for this request, consuming one use, or undefined. */
  take(provider: SimProvider, model: string | undefined): Fault | undefined {
    const entry = this.entries.find(
      (e) => (e.match.provider === undefined || e.match.provider === provider) && (e.match.model === undefined || e.match.model === model),
    );
    if (!entry) return undefined;
    entry.remaining--;
    if (entry.remaining <= 0) this.entries = this.entries.filter((e) => e !== entry);
    return entry.fault;
  }
}

/** Short label recorded on the request, e.g. `status:529`, `reset-after-chunks:2`. */
export function describeFault(fault: Fault): string {
  switch (fault.kind) {
    case 'status':
      return `status:${fault.status}`;
    case 'slow-headers':
      return `slow-headers:${fault.delayMs}`;
    case 'reset-after-chunks':
    case 'stall-after-chunks':
    case 'error-event-after-chunks':
      return `${fault.kind}:${fault.chunks}`;
    case 'malformed':
      return fault.chunks === undefined ? fault.kind : `${fault.kind}:${fault.chunks}`;
    case 'keep-alive':
      return `${fault.kind}:${fault.everyMs}`;
    case 'paced':
      return `${fault.kind}:${fault.everyMs}${fault.words === undefined ? '' : `x${fault.words}`}`;
    default:
      return fault.kind;
  }
}

function nonNegative(value: unknown): number | undefined {
  const n = asNumber(value);
  return n !== undefined && n >= 0 ? n : undefined;
}

function positive(value: unknown): number | undefined {
  const n = asNumber(value);
  return n !== undefined && n > 0 ? n : undefined;
}

/** Validate a fault received as JSON; undefined when it is not a well-formed {@link Fault}. */
export function parseFault(value: unknown): Fault | undefined {
  if (!isObject(value)) return undefined;
  switch (value['kind']) {
    case 'status': {
      const status = asNumber(value['status']);
      if (status === undefined || status < 400 || status > 599) return undefined;
      const fault: Fault = { kind: 'status', status };
      const seconds = nonNegative(value['retryAfterSeconds']);
      const ms = nonNegative(value['retryAfterMs']);
      if (seconds !== undefined) fault.retryAfterSeconds = seconds;
      if (ms !== undefined) fault.retryAfterMs = ms;
      return fault;
    }
    case 'slow-headers': {
      const delayMs = nonNegative(value['delayMs']);
      return delayMs === undefined ? undefined : { kind: 'slow-headers', delayMs };
    }
    case 'reset-after-chunks':
    case 'stall-after-chunks':
    case 'error-event-after-chunks': {
      const chunks = nonNegative(value['chunks']);
      return chunks === undefined ? undefined : { kind: value['kind'], chunks };
    }
    case 'malformed': {
      if (value['chunks'] === undefined) return { kind: 'malformed' };
      const chunks = nonNegative(value['chunks']);
      return chunks === undefined ? undefined : { kind: 'malformed', chunks };
    }
    case 'context-length': {
      const fault: Extract<Fault, { kind: 'context-length' }> = { kind: 'context-length' };
      for (const field of ['limit', 'tokens'] as const) {
        if (value[field] === undefined) continue;
        const n = positive(value[field]);
        if (n === undefined) return undefined;
        fault[field] = n;
      }
      return fault;
    }
    case 'keep-alive': {
      const everyMs = positive(value['everyMs']);
      return everyMs === undefined ? undefined : { kind: 'keep-alive', everyMs };
    }
    case 'paced': {
      const everyMs = nonNegative(value['everyMs']);
      if (everyMs === undefined) return undefined;
      if (value['words'] === undefined) return { kind: 'paced', everyMs };
      const words = positive(value['words']);
      return words === undefined ? undefined : { kind: 'paced', everyMs, words: Math.floor(words) };
    }
    case 'hang':
    case 'reset-before-headers':
    case 'api-key-invalid':
      return { kind: value['kind'] };
    default:
      return undefined;
  }
}

/** Validate a {@link FaultMatch} received as JSON (absent = match everything). */
export function parseFaultMatch(value: unknown): FaultMatch | undefined {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) return undefined;
  const match: FaultMatch = {};
  if (value['provider'] !== undefined) {
    const provider = SIM_PROVIDERS.find((p) => p === value['provider']);
    if (!provider) return undefined;
    match.provider = provider;
  }
  if (value['model'] !== undefined) {
    if (typeof value['model'] !== 'string') return undefined;
    match.model = value['model'];
  }
  return match;
}
