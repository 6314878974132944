/**
 * The request shapes modelmux sends to the Gemini API (`generateContent`, `streamGenerateContent`,
 * `batchEmbedContents`; source: Gemini API, providers.md §3.2 and §3.6). Only the fields we set.
 * Field names are camelCase, as the API documents them.
 */

/** Gemini has two conversation roles; OpenAI's `assistant` is `model` (providers.md §3.2). */
export type GeminiRole = 'user' | 'model';

/** A JSON object (Gemini's protobuf `Struct`: function args, function responses, schemas). */
export type JsonObject = Record<string, unknown>;

/** One part of a content turn. */
export type GeminiPart =
  | { text: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  /** `thoughtSignature`: the opaque signature Gemini put on this call, sent back unchanged (§3.2). */
  | { functionCall: { name: string; args: JsonObject }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: JsonObject } };

/** One turn of the conversation. `parts` is never empty (Gemini rejects empty turns). */
export interface GeminiContent {
  role: GeminiRole;
  parts: GeminiPart[];
}

/** `generationConfig.thinkingConfig` (budget in tokens; 0 disables thinking where allowed). */
export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

/** `generationConfig` (token counts in tokens). */
export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: JsonObject;
  thinkingConfig?: GeminiThinkingConfig;
}

/** One entry of `tools[].functionDeclarations`; `parameters` is Gemini's OpenAPI-subset Schema. */
export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: JsonObject;
}

/** `toolConfig.functionCallingConfig.mode` values we send (providers.md §3.2). */
export type GeminiFunctionCallingMode = 'AUTO' | 'ANY' | 'NONE';

/** The `generateContent` / `streamGenerateContent` request body. */
export interface GeminiGenerateContentBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  generationConfig: GeminiGenerationConfig;
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: GeminiFunctionCallingMode; allowedFunctionNames?: string[] } };
  /** A context cache to read before `contents`: `cachedContents/{id}` (providers.md §3.2). */
  cachedContent?: string;
}
