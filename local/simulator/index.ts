/**
 * Built-in upstream simulator: a loopback HTTP server standing in for every provider of the manifest in
 * its wire format, on the endpoints the gateway calls, with fault injection (README.md beside this file).
 */
export { startSimulator } from './server.js';
export { baseReplyText } from './reply.js';
export { countWords, promptTokens } from './json-narrowing.js';
export { embed } from './embeddings.js';
export type { Fault, FaultMatch, RecordedRequest, Simulator, SimulatorOptions } from './types.js';
