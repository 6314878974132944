/**
 * Built-in upstream simulator: a loopback HTTP server speaking OpenAI, Anthropic, Gemini, DeepSeek,
 * MiniMax, Together, DeepInfra and Groq wire formats (providers.md §1-6), with fault injection.
 *
 * ```ts
 * const sim = await startSimulator();
 * const client = new OpenAI({ apiKey: 'sk-test', baseURL: sim.urls.openai });
 * sim.setFault({ provider: 'anthropic' }, { kind: 'status', status: 529 }, { times: 1 });
 * await sim.close();
 * ```
 */
export { startSimulator, DEFAULT_REPLY_WORDS } from './server.js';
export { PREFIXES } from './routes.js';
export { BAD_KEY } from './auth.js';
export { BLOCK_WORD } from './gemini-input.js';
export { FILLER_WORDS, baseReplyText } from './reply.js';
export { countWords, promptTokens } from './token-count.js';
export { embed, DEFAULT_DIMENSIONS } from './embeddings.js';
export { SIM_PROVIDERS } from './types.js';
export type { Fault, FaultMatch, RecordedRequest, SimProvider, Simulator, SimulatorOptions } from './types.js';
