/**
 * In-process CPU profiling for the gateway child (the same sampler `node --cpu-prof` uses, but it can
 * be started and stopped around one load phase instead of the whole process life). Positions are
 * mapped back to the TypeScript sources through the source maps tsx attaches (the child runs with
 * `--enable-source-maps`, as the Lambda functions do), so hotspots read `functions/…ts:line`.
 */
import { writeFileSync } from 'node:fs';
import type { Profiler } from 'node:inspector';
import { Session } from 'node:inspector/promises';
import { findSourceMap, type SourceMap } from 'node:module';

let session: Session | undefined;

/** Starts sampling every `intervalUs` microseconds (default 200 µs). */
export async function startCpuProfile(intervalUs = 200): Promise<void> {
  if (session !== undefined) throw new Error('a profile is already running');
  session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
}

/**
 * Stops sampling, maps call frames to original sources, writes a `.cpuprofile` (Chrome DevTools
 * format) to `file`, and returns the number of samples.
 */
export async function stopCpuProfile(file: string): Promise<{ file: string; samples: number }> {
  if (session === undefined) throw new Error('no profile is running');
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  session = undefined;
  remapToSources(profile);
  writeFileSync(file, JSON.stringify(profile));
  return { file, samples: profile.samples?.length ?? 0 };
}

/** Rewrites each frame of a transpiled file to its original file and 0-based line, in place. */
function remapToSources(profile: Profiler.Profile): void {
  const maps = new Map<string, SourceMap | undefined>();
  for (const node of profile.nodes) {
    const frame = node.callFrame;
    if (!frame.url.startsWith('file://') || frame.lineNumber < 0) continue;
    let map = maps.get(frame.url);
    if (!maps.has(frame.url)) {
      map = findSourceMap(frame.url);
      maps.set(frame.url, map);
    }
    if (map === undefined) continue;
    const entry = map.findEntry(frame.lineNumber, Math.max(0, frame.columnNumber));
    if (!('originalSource' in entry) || typeof entry.originalSource !== 'string') continue;
    frame.url = entry.originalSource;
    frame.lineNumber = entry.originalLine;
    frame.columnNumber = entry.originalColumn;
  }
}
