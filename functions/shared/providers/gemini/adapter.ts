import type { ProviderAdapter } from '../types';
import { buildGeminiEmbeddingsRequest, parseGeminiEmbeddingsResponse } from './embeddings';
import { buildGeminiImagesRequest, parseGeminiImagesResponse } from './images';
import { classifyGeminiError } from './gemini-errors';
import { buildGeminiChatRequest } from './request';
import { createGeminiStreamTransform } from './stream';

/**
 * The native Gemini API adapter (Generative Language API v1beta, providers.md §3): chat through
 * `streamGenerateContent?alt=sse`, embeddings through `batchEmbedContents`, images
 * through `generateContent` with image output (images.ts).
 * The endpoint's base URL is like `https://generativelanguage.googleapis.com/v1beta`.
 */
export const geminiAdapter: ProviderAdapter = {
  buildChatRequest: buildGeminiChatRequest,
  createStreamTransform: createGeminiStreamTransform,
  classifyError: classifyGeminiError,
  namedContextCache: true,
  buildEmbeddingsRequest: buildGeminiEmbeddingsRequest,
  parseEmbeddingsResponse: parseGeminiEmbeddingsResponse,
  buildImagesRequest: buildGeminiImagesRequest,
  parseImagesResponse: parseGeminiImagesResponse,
};
