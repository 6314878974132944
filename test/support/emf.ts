/**
 * Reads the Embedded Metric Format lines Powertools Metrics writes to stdout (the real output, not a
 * mock): each line is a JSON object with `_aws.CloudWatchMetrics[0]` naming the namespace, the dimension
 * sets and the metrics, and the values at the top level (CloudWatch docs, "Embedded metric format
 * specification").
 */

/** One metric as one EMF line carries it. */
export interface EmfMetric {
  namespace: string;
  name: string;
  unit: string;
  /** The dimension sets (lists of dimension names). */
  dimensions: string[][];
  /** Dimension name -> value on that line. */
  dimensionValues: Record<string, string>;
  /** The value, or the values when recorded several times before one flush. */
  values: number[];
  /** The line's `requestId` metadata, when the handler flushed it. */
  requestId?: string;
}

interface EmfLine {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  [key: string]: unknown;
}

/** Captures stdout writes until `stop()`; `metrics()` parses the EMF lines among them. */
export function captureEmf(): { metrics(): EmfMetric[]; clear(): void; stop(): void } {
  const original = process.stdout.write.bind(process.stdout);
  let text = '';
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const s = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (s.includes('"_aws"')) {
      text += s;
      return true;
    }
    return (original as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  return {
    metrics: () => parseEmf(text),
    clear: () => {
      text = '';
    },
    stop: () => {
      process.stdout.write = original;
    },
  };
}

/** Every metric of every EMF line in `text`. */
export function parseEmf(text: string): EmfMetric[] {
  const found: EmfMetric[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"_aws"')) continue;
    const parsed = JSON.parse(line) as EmfLine;
    for (const directive of parsed._aws.CloudWatchMetrics) {
      const dimensionValues: Record<string, string> = {};
      for (const name of directive.Dimensions.flat()) dimensionValues[name] = String(parsed[name]);
      for (const metric of directive.Metrics) {
        const raw = parsed[metric.Name];
        found.push({
          namespace: directive.Namespace,
          name: metric.Name,
          unit: metric.Unit,
          dimensions: directive.Dimensions,
          dimensionValues,
          values: Array.isArray(raw) ? (raw as number[]) : [raw as number],
          ...(typeof parsed.requestId === 'string' ? { requestId: parsed.requestId } : {}),
        });
      }
    }
  }
  return found;
}
