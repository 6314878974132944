/**
 * When the simulated model calls a tool, and with what (README.md "Replies"): as a coding agent's model
 * does, only when the latest user prompt asks for one or the request forces one, never because tools are
 * merely declared (Claude Code and Codex declare a dozen every turn). The prompt asks for a tool by naming
 * it (`Read`, `get_weather`) or a word of its name (`weather`), by `use a tool` / `call a tool`, or with
 * `[parallel]` (one call per declared tool, at most 3). `<system-reminder>` blocks (Claude Code's context)
 * and `<session_context>` blocks (Gemini CLI's: date, OS, workspace tree) are not the prompt. Arguments
 * follow the schema (schema-value.ts), except that a path-like property takes the first path in the
 * prompt and a command property the first `backticked` span.
 */
import { isObject, type JsonObject } from './json-narrowing.js';
import { valueFromSchema } from './schema-value.js';

/** A function the model may call: name and JSON Schema of its parameters. */
export interface ToolDecl {
  name: string;
  parameters: unknown;
}

const MAX_PARALLEL_CALLS = 3;
/** Words of a tool's name that say nothing of what it does. */
const VAGUE_WORDS = new Set(['get', 'set', 'run', 'do', 'make', 'call', 'use', 'tool', 'tools', 'fn', 'func', 'function', 'the', 'and', 'for', 'with']);
const GENERIC_ASK = /\b(use|call)\s+(a|an|any|the|your|one)\s+tools?\b/i;

/** The prompt as the model reads it: Claude Code's `<system-reminder>` and Gemini CLI's `<session_context>` context taken out. */
export function promptOf(text: string): string {
  return text.replace(/<(system-reminder|session_context)>[\s\S]*?<\/\1>/g, ' ');
}

/** The words of a tool name: split at `_`, `-`, `.`, `:` and camelCase, lower-cased. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_.:-]+/)
    .map((w) => w.toLowerCase())
    .filter((w) => w.length >= 3 && !VAGUE_WORDS.has(w));
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Where in `prompt` the tool is named: its full name first, else a word of it; undefined when not named. */
function mention(tool: ToolDecl, prompt: string): { at: number; exact: boolean } | undefined {
  const exact = new RegExp(`(?<![\\w-])${escape(tool.name)}(?![\\w-])`, 'i').exec(prompt);
  if (exact) return { at: exact.index, exact: true };
  const hits = nameWords(tool.name)
    .map((w) => new RegExp(`\\b${escape(w)}\\b`, 'i').exec(prompt)?.index ?? -1)
    .filter((i) => i >= 0);
  return hits.length > 0 ? { at: Math.min(...hits), exact: false } : undefined;
}

/**
 * The tools the model calls on a user turn with `text` (markers included): those the prompt names
 * (full names before name words, then by where they are named; one, or up to 3 with `[parallel]`), the
 * first declared one when the prompt asks for "a tool" or the request forces a call, else none.
 */
export function toolsAskedFor(tools: readonly ToolDecl[], text: string, forced: boolean): ToolDecl[] {
  if (tools.length === 0) return [];
  const prompt = promptOf(text);
  const parallel = prompt.includes('[parallel]');
  const limit = parallel ? MAX_PARALLEL_CALLS : 1;
  const named = tools
    .map((tool, order) => ({ tool, order, hit: mention(tool, prompt) }))
    .filter((t) => t.hit !== undefined)
    .sort((a, b) => Number(b.hit!.exact) - Number(a.hit!.exact) || a.hit!.at - b.hit!.at || a.order - b.order)
    .map((t) => t.tool);
  if (named.length > 0) return named.slice(0, limit);
  return parallel || forced || GENERIC_ASK.test(prompt) ? tools.slice(0, limit) : [];
}

const PATH_PROPERTY = /path|file|dir|cwd|folder/i;
const COMMAND_PROPERTY = /^(command|cmd|script)$/i;
/** An absolute, home or relative path with a slash, or a file name with an extension. */
const PATH_IN_TEXT = /(?<![\w`])((?:~|\.{1,2})?\/[^\s`'"]+|[\w.-]+\/[^\s`'"]+|[\w-]+\.[A-Za-z0-9]{1,8})(?![\w`])/;

/** Arguments of a call to `tool` asked for by `text`: from the schema, with the prompt's path and command. */
export function argsFor(tool: ToolDecl, text: string): JsonObject {
  const prompt = promptOf(text);
  const path = PATH_IN_TEXT.exec(prompt)?.[1]?.replace(/[.,;:!?)]+$/, '');
  const command = /`([^`]+)`/.exec(prompt)?.[1];
  const value = valueFromSchema(tool.parameters, {
    property: (name, schema) => {
      const type = schema['type'];
      if (path !== undefined && PATH_PROPERTY.test(name) && type === 'string') return path;
      if (command === undefined || !COMMAND_PROPERTY.test(name)) return undefined;
      if (type === 'string') return command;
      return type === 'array' ? ['bash', '-lc', command] : undefined;
    },
  });
  return isObject(value) ? value : {};
}
