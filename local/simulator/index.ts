/**
 * Built-in upstream simulator: a loopback HTTP server speaking the OpenAI, Anthropic, Gemini, DeepSeek,
 * MiniMax, Together, DeepInfra and Groq wire formats on the endpoints the gateway calls, with fault
 * injection (README.md beside this file).
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
export { countWords, promptTokens } from './token-count.js';
export { embed } from './embeddings.js';
export type { Fault, FaultMatch, RecordedRequest, SimProvider, Simulator, SimulatorOptions } from './types.js';
