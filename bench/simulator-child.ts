/**
 * Child process of `npm run bench`: the upstream simulator in its own process (its CPU is not the
 * gateway's). Sends `{type: 'ready', baseUrl, urls}`; the parent steers it through the simulator's
 * HTTP control API (`/__sim/chunk-delay`, `/__sim/reset`).
 */
import { startSimulator } from '../local/simulator/index';
import { SIMULATOR_REPLY_WORDS } from './config';

const sim = await startSimulator({ replyWords: SIMULATOR_REPLY_WORDS });
process.once('disconnect', () => void sim.close().finally(() => process.exit(0)));
process.send?.({ type: 'ready', baseUrl: sim.baseUrl, urls: sim.urls });
