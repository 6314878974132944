/**
 * The smoke test's steps and their verdicts: each step runs once, in order, unless a step it needs did
 * not pass (then it is SKIP, naming which); a step passes when its body resolves (its detail is the
 * line printed) and fails when it throws (the error's message is printed). Nothing here knows what the
 * steps do.
 */

/** How a step ended. */
export type Verdict = 'PASS' | 'FAIL' | 'SKIP';

/** One step's verdict and the line that explains it. */
export interface StepResult {
  step: string;
  verdict: Verdict;
  detail: string;
  /** Wall time of the step, ms (0 for a skipped step). */
  ms: number;
}

/** A step: its name, the steps that must have passed first, and its body (resolving to the detail). */
export interface Step {
  name: string;
  needs?: readonly string[];
  run: () => Promise<string>;
}

/** Width of the step-name column. */
const NAME_WIDTH = 12;

/** One result as printed: `PASS  chat          gpt-4o-mini answered … (0.4 s)`. */
export function formatResult(r: StepResult): string {
  const time = r.verdict === 'SKIP' ? '' : ` (${(r.ms / 1000).toFixed(1)} s)`;
  return `${r.verdict}  ${r.step.padEnd(NAME_WIDTH)}  ${r.detail}${time}`;
}

/**
 * Runs the steps in order, printing each result as it ends (`write` gets one line at a time).
 * @returns every step's result, in order; never throws.
 */
export async function runSteps(steps: readonly Step[], write: (line: string) => void): Promise<StepResult[]> {
  const results: StepResult[] = [];
  const passed = new Set<string>();
  for (const step of steps) {
    const missing = (step.needs ?? []).filter((n) => !passed.has(n));
    let result: StepResult;
    if (missing.length > 0) {
      result = { step: step.name, verdict: 'SKIP', detail: `needs ${missing.join(', ')}`, ms: 0 };
    } else {
      const started = performance.now();
      try {
        const detail = await step.run();
        result = { step: step.name, verdict: 'PASS', detail, ms: performance.now() - started };
        passed.add(step.name);
      } catch (err) {
        result = { step: step.name, verdict: 'FAIL', detail: errorText(err), ms: performance.now() - started };
      }
    }
    results.push(result);
    write(formatResult(result));
  }
  return results;
}

/** An error as one line: its message, with the HTTP status and request id when an SDK error carries them. */
function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const e = err as Error & { status?: unknown; requestID?: unknown; request_id?: unknown };
  const status = typeof e.status === 'number' ? ` [HTTP ${e.status}]` : '';
  const id = [e.requestID, e.request_id].find((v) => typeof v === 'string');
  return `${e.message.replace(/\s+/g, ' ').trim()}${status}${id === undefined ? '' : ` (request ${String(id)})`}`;
}

/** `smoke: 13 passed, 0 failed, 0 skipped`. */
export function summary(results: readonly StepResult[]): string {
  const n = (v: Verdict) => results.filter((r) => r.verdict === v).length;
  return `smoke: ${n('PASS')} passed, ${n('FAIL')} failed, ${n('SKIP')} skipped`;
}
