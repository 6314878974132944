/**
 * Built-in upstream simulator: a loopback HTTP server standing in for every provider of the manifest, in
 * its wire format (OpenAI-compatible with DeepSeek's and MiniMax's differences, Anthropic, Gemini) on the
 * endpoints the gateway calls, with fault injection (README.md beside this file).
 *
 * ```ts
 * const sim = await startSimulator();
 * const client = new OpenAI({ apiKey: 'sk-test', baseURL: sim.urls.openai });
 * sim.setFault({ provider: 'anthropic' }, { kind: 'status', status: 529 }, { times: 1 });
 * await sim.close();
 * ```
 */
export { startSimulator } from './server.js';
export { baseReplyText } from './reply.js';
export { countWords, promptTokens } from './json-narrowing.js';
export { embed } from './embeddings.js';
export type { Fault, FaultMatch, RecordedRequest, SimProvider, Simulator, SimulatorOptions } from './types.js';
