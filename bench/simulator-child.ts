/**
 * Child process of `npm run bench`: the upstream simulator in its own process (its CPU is not the
 * gateway's), replying BENCH_REPLY_WORDS words. Sends `{type: 'ready', baseUrl, urls}`; the parent
 * steers it through the simulator's HTTP control API (`/__sim/chunk-delay`, `/__sim/reset`).
 */
import { startSimulator } from '../local/simulator/index';

const sim = await startSimulator({ replyWords: Number(process.env.BENCH_REPLY_WORDS ?? 750) });
process.once('disconnect', () => void sim.close().finally(() => process.exit(0)));
process.send?.({ type: 'ready', baseUrl: sim.baseUrl, urls: sim.urls });
