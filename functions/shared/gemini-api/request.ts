import * as z from '../validation/zod';

/**
 * A Gemini API `generateContent` / `streamGenerateContent` / `countTokens` request body
 * (docs/providers.md §10): `contents` of `{role, parts}`, `systemInstruction`,
 * `tools: [{functionDeclarations}]`, `generationConfig`. Validated only as far as the translation
 * reads it; other fields and part kinds are kept (loose objects), so a new field is never a 400.
 */

const o = z.optional;

/** One part: text (a thought when `thought`), an inline image, a function call or its response. */
export const geminiPart = z.looseObject({
  text: o(z.string()),
  thought: o(z.boolean()),
  thoughtSignature: o(z.string()),
  inlineData: o(z.looseObject({ mimeType: z.string(), data: z.string(), displayName: o(z.string()) })),
  functionCall: o(z.looseObject({ id: o(z.string()), name: z.string(), args: o(z.record(z.string(), z.unknown())) })),
  functionResponse: o(z.looseObject({ id: o(z.string()), name: z.string(), response: o(z.unknown()) })),
});
export type GeminiPart = z.infer<typeof geminiPart>;

/** One turn: `user` or `model` (a turn without a role is the user's). */
export const geminiContent = z.looseObject({ role: o(z.string()), parts: z.array(geminiPart) });
export type GeminiContent = z.infer<typeof geminiContent>;

const functionDeclaration = z.looseObject({
  name: z.string().check(z.minLength(1)),
  description: o(z.string()),
  parameters: o(z.unknown()),
  parametersJsonSchema: o(z.unknown()),
});

/** `generationConfig` fields the translation reads; `thinkingConfig` as Gemini 2.5 and 3 send it. */
const generationConfig = z.looseObject({
  temperature: o(z.number()),
  topP: o(z.number()),
  topK: o(z.number()),
  maxOutputTokens: o(z.number().check(z.int(), z.gte(1))),
  stopSequences: o(z.array(z.string())),
  candidateCount: o(z.number().check(z.int())),
  responseMimeType: o(z.string()),
  responseSchema: o(z.unknown()),
  responseJsonSchema: o(z.unknown()),
  thinkingConfig: o(z.looseObject({ includeThoughts: o(z.boolean()), thinkingBudget: o(z.number().check(z.int())), thinkingLevel: o(z.string()) })),
});

/** The body of `:generateContent`, `:streamGenerateContent` and `:countTokens` (which may wrap it in `generateContentRequest`). */
export const geminiRequest = z.looseObject({
  contents: o(z.array(geminiContent)),
  systemInstruction: o(z.looseObject({ role: o(z.string()), parts: o(z.array(geminiPart)) })),
  tools: o(z.array(z.looseObject({ functionDeclarations: o(z.array(functionDeclaration)) }))),
  toolConfig: o(z.looseObject({ functionCallingConfig: o(z.looseObject({ mode: o(z.string()) })) })),
  generationConfig: o(generationConfig),
  generateContentRequest: o(z.looseObject({ contents: o(z.array(geminiContent)) })),
});
export type GeminiRequest = z.infer<typeof geminiRequest>;
