/**
 * Injected faults: a registry consulted once per provider request.
 */
import type { Fault, FaultMatch, SimProvider } from './types.js';

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
