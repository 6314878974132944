import type { ChatCompletionRequest } from '../../openai/chat-request';
import { functionToolsOnly } from '../unsupported-parameters';
import { toGeminiParameters } from './function-schema';
import type { GeminiFunctionDeclaration, GeminiGenerateContentBody } from './wire-request';

/**
 * OpenAI `tools` / `tool_choice` → Gemini `tools[].functionDeclarations` / `toolConfig`
 * (Gemini API, providers.md §3.2): `auto` → AUTO, `none` → NONE, `required` → ANY, a named function →
 * ANY restricted by `allowedFunctionNames`. Parameters go through {@link toGeminiParameters}.
 * Without tools nothing is sent (a toolConfig alone means nothing to Gemini).
 * @throws InvalidRequestError (400 `unsupported_parameter`) for OpenAI's custom tools, custom or
 *   `allowed_tools` tool choices and custom tool calls (unsupported-parameters.ts).
 */
export function toGeminiTools(req: ChatCompletionRequest): Pick<GeminiGenerateContentBody, 'tools' | 'toolConfig'> {
  const { tools, toolChoice: choice } = functionToolsOnly(req);
  if (tools === undefined || tools.length === 0) return {};
  const functionDeclarations = tools.map((t): GeminiFunctionDeclaration => {
    const decl: GeminiFunctionDeclaration = { name: t.function.name };
    if (t.function.description !== undefined) decl.description = t.function.description;
    const parameters = toGeminiParameters(t.function.parameters);
    if (parameters !== undefined) decl.parameters = parameters;
    return decl;
  });
  const out: Pick<GeminiGenerateContentBody, 'tools' | 'toolConfig'> = { tools: [{ functionDeclarations }] };
  if (choice === undefined) return out;
  if (typeof choice === 'object') {
    out.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
    return out;
  }
  switch (choice) {
    case 'auto':
      out.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
      break;
    case 'none':
      out.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
      break;
    case 'required':
      out.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
      break;
    default:
      return choice satisfies never;
  }
  return out;
}
