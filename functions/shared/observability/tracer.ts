import type { Tracer } from '@aws-lambda-powertools/tracer';
import { config } from '../config/env';

/**
 * Optional AWS X-Ray tracing with Powertools Tracer: the upstream call, the hold and the settle become
 * subsegments of the Lambda invocation's segment, annotated with the target and the outcome.
 *
 * Off by default (the stack turns it on with `-c tracing=true`: active tracing on the functions and
 * `POWERTOOLS_TRACE_ENABLED=true`). When off, nothing is loaded: the tracer (Powertools + the X-Ray SDK,
 * ~300 KB) is imported only by {@link initTracing} when the variable says so, and in the Lambda bundle
 * it is a separate file beside the handler (lib/constructs/gateway-function.ts, `TRACER_FILE`), so a
 * cold start without tracing neither reads nor parses it. Every span is then a shared no-op object.
 */

/**
 * Where the tracer lives: the package when run from source; in a Lambda bundle, the separate file the
 * build `define`s here.
 */
const TRACER_MODULE = process.env.MODELMUX_TRACER_MODULE ?? '@aws-lambda-powertools/tracer';

/** A traced unit of work: an X-Ray subsegment when tracing is on, a no-op otherwise. */
export interface Span {
  /** An indexed X-Ray annotation (searchable in the console), e.g. `target`, `outcome`. */
  annotate(key: string, value: string | number | boolean): void;
  /** Marks the subsegment as failed with this error. */
  fail(error: unknown): void;
  /** Closes the subsegment (sent to the X-Ray daemon); later calls do nothing. */
  end(): void;
}

const NO_SPAN: Span = Object.freeze({ annotate: () => undefined, fail: () => undefined, end: () => undefined });

let tracer: Tracer | undefined;

/**
 * Loads and starts the tracer when `POWERTOOLS_TRACE_ENABLED` (Powertools' own variable, config/env.ts) is `true`; otherwise does nothing. Awaited at
 * INIT by the handlers (edge/function-url.ts `initGateway`). Powertools keeps it inert outside Lambda
 * (no `AWS_EXECUTION_ENV`).
 */
export async function initTracing(): Promise<void> {
  if (!config().POWERTOOLS_TRACE_ENABLED || tracer !== undefined) return;
  const { Tracer: TracerClass } = (await import(TRACER_MODULE)) as typeof import('@aws-lambda-powertools/tracer');
  tracer = new TracerClass({ serviceName: config().POWERTOOLS_SERVICE_NAME });
}

/** Starts a subsegment `name` of the invocation's segment; a no-op when tracing is off. */
export function startSpan(name: string): Span {
  if (tracer === undefined || !tracer.isTracingEnabled()) return NO_SPAN;
  const parent = tracer.getSegment();
  if (parent === undefined) return NO_SPAN;
  const sub = parent.addNewSubsegment(name);
  return {
    annotate: (key, value) => sub.addAnnotation(key, value),
    fail: (error) => sub.addError(error instanceof Error ? error : new Error(String(error))),
    end: () => {
      if (!sub.isClosed()) sub.close();
    },
  };
}

/** Runs `work` inside a span `name`: failed when it throws (and rethrows), ended either way. */
export async function traced<T>(name: string, work: () => Promise<T>): Promise<T> {
  const span = startSpan(name);
  try {
    return await work();
  } catch (error) {
    span.fail(error);
    throw error;
  } finally {
    span.end();
  }
}
