/**
 * Child process: the upstream simulator on its own, so its CPU is not the gateway's. Started by
 * bench/run.ts with `BENCH_REPLY_WORDS`; commands: `chunk-delay` {ms}, `reset` (clears the request
 * log, which otherwise grows by one entry per request).
 */
import { startSimulator } from '../local/simulator/index';
import { serveParent } from './ipc';

/** What the simulator child reports when ready. */
export interface SimulatorInfo {
  baseUrl: string;
  urls: Record<string, string>;
}

const sim = await startSimulator({ chunkDelayMs: 0, replyWords: Number(process.env.BENCH_REPLY_WORDS ?? 12) });

let closing = false;
const shutdown = (): void => {
  if (closing) return;
  closing = true;
  void sim.close().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

const info: SimulatorInfo = { baseUrl: sim.baseUrl, urls: sim.urls };
serveParent(
  info,
  {
    'chunk-delay': async (arg) => {
      const ms = typeof arg === 'number' ? arg : Number.NaN;
      if (!(ms >= 0)) throw new Error('chunk-delay needs a number of ms >= 0');
      sim.setChunkDelay(ms);
      return ms;
    },
    reset: async () => {
      sim.reset();
      return true;
    },
  },
  shutdown,
);
