import type { ChatCompletionRequest } from '../../openai/chat-request';
import type { FunctionTool } from '../../openai/chat-tools';
import type { FunctionToolChoice } from '../unsupported-parameters';
import type { AnthropicTool, AnthropicToolChoice } from './request-body';

/**
 * OpenAI `tools` / `tool_choice` / `parallel_tool_calls` → Anthropic `tools` / `tool_choice`
 * (providers.md §2.4). Function `strict` has no Anthropic counterpart and is dropped.
 */

/** Function tools → Anthropic tool definitions; undefined when there are none. */
export function toAnthropicTools(tools: readonly FunctionTool[] | undefined): AnthropicTool[] | undefined {
  if (tools === undefined || tools.length === 0) return undefined;
  return tools.map(({ function: f, cache_control }) => {
    const tool: AnthropicTool = { name: f.name, input_schema: inputSchema(f.parameters) };
    if (f.description !== undefined) tool.description = f.description;
    // A breakpoint on a tool caches every tool definition up to it (OpenRouter's shape, docs/prices.md).
    if (cache_control !== undefined) tool.cache_control = cache_control;
    return tool;
  });
}

/**
 * `tool_choice` + `parallel_tool_calls` → Anthropic `tool_choice`:
 * `auto` → `{type:"auto"}`, `none` → `{type:"none"}`, `required` → `{type:"any"}`, a named function →
 * `{type:"tool", name}`. `parallel_tool_calls: false` sets `disable_parallel_tool_use: true` (on `auto`
 * when no choice was given); `none` takes no such flag (Anthropic SDK `ToolChoiceNone`).
 * @returns undefined to leave Anthropic's default (auto, parallel allowed).
 */
export function toAnthropicToolChoice(choice: FunctionToolChoice | undefined, parallelToolCalls: boolean | undefined): AnthropicToolChoice | undefined {
  const serial = parallelToolCalls === false;
  if (choice === undefined) return serial ? { type: 'auto', disable_parallel_tool_use: true } : undefined;
  if (choice === 'none') return { type: 'none' };
  const base: Exclude<AnthropicToolChoice, { type: 'none' }> =
    choice === 'auto' ? { type: 'auto' } : choice === 'required' ? { type: 'any' } : { type: 'tool', name: choice.function.name };
  if (serial) base.disable_parallel_tool_use = true;
  return base;
}

/** Whether the choice forces a tool call (OpenAI `required` or a named function). */
export function forcesToolUse(choice: ChatCompletionRequest['tool_choice']): boolean {
  return choice !== undefined && choice !== 'auto' && choice !== 'none';
}

/**
 * Anthropic requires `input_schema.type: "object"`; OpenAI clients sometimes send `{}` for a function
 * without arguments, which OpenAI accepts.
 */
function inputSchema(parameters: Record<string, unknown> | undefined): Record<string, unknown> {
  // OpenAI: an omitted `parameters` means a function without arguments.
  if (parameters === undefined) return { type: 'object', properties: {} };
  return parameters.type === undefined ? { type: 'object', ...parameters } : parameters;
}
