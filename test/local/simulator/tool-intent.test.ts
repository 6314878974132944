/**
 * When the simulated model calls a tool (local/simulator/tool-intent.ts): only when the latest prompt
 * asks for one, the one it names, with the prompt's path and command as arguments.
 */
import { describe, expect, it } from 'vitest';
import { argsFor, toolsAskedFor } from '../../../local/simulator/tool-intent.js';

const schema = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ type: 'object', properties, required });
/** Claude Code's default tools, in its order (the first is Agent). */
const claudeTools = ['Agent', 'Bash', 'Glob', 'Grep', 'Read', 'Edit', 'Write', 'WebFetch', 'TodoWrite'].map((name) => ({
  name,
  parameters: schema({ file_path: { type: 'string' } }),
}));
const names = (tools: { name: string }[]) => tools.map((t) => t.name);

describe('which tool the prompt asks for', () => {
  it('calls none when tools are merely declared', () => {
    expect(toolsAskedFor(claudeTools, 'say hi', false)).toEqual([]);
    expect(toolsAskedFor(claudeTools, 'Explain what a monad is.', false)).toEqual([]);
  });

  it('calls the tool the prompt names, not the first declared one', () => {
    expect(names(toolsAskedFor(claudeTools, 'Read the file /tmp/a.txt and answer with its first line.', false))).toEqual(['Read']);
    expect(names(toolsAskedFor(claudeTools, 'Use the Bash tool to list files', false))).toEqual(['Bash']);
    const weather = [
      { name: 'noop', parameters: {} },
      { name: 'get_weather', parameters: {} },
    ];
    expect(names(toolsAskedFor(weather, 'What is the weather in Paris?', false))).toEqual(['get_weather']);
  });

  it('prefers a full name over a word of a name, then the earliest mention', () => {
    expect(names(toolsAskedFor(claudeTools, 'the web page you saved: Read it', false))).toEqual(['Read']);
    expect(names(toolsAskedFor(claudeTools, 'grep for x, or glob for it [parallel]', false))).toEqual(['Grep', 'Glob']);
  });

  it("reads the prompt without Claude Code's <system-reminder> context", () => {
    const text = '<system-reminder>You may Read, Edit and Write files; use the Agent tool.</system-reminder>\nsay hi';
    expect(toolsAskedFor(claudeTools, text, false)).toEqual([]);
  });

  it("reads the prompt without Gemini CLI's <session_context> (its workspace tree and paths)", () => {
    const geminiTools = ['list_directory', 'read_file', 'glob'].map((name) => ({ name, parameters: schema({ dir_path: { type: 'string' } }) }));
    const context =
      "<session_context>\nThe project's temporary directory is: /tmp/h/.gemini/tmp/w\n- **Directory Structure:**\n/tmp/w/\n└───notes.txt\n</session_context>";
    expect(toolsAskedFor(geminiTools, `${context}\nsay hi`, false)).toEqual([]);
    const ask = `${context}\nUse the read_file tool on /tmp/w/notes.txt.`;
    expect(names(toolsAskedFor(geminiTools, ask, false))).toEqual(['read_file']);
    expect(argsFor(geminiTools[1]!, ask)).toEqual({ dir_path: '/tmp/w/notes.txt' });
  });

  it('calls the first tool when the prompt asks for "a tool" or the request forces a call', () => {
    expect(names(toolsAskedFor(claudeTools, 'please use a tool', false))).toEqual(['Agent']);
    expect(names(toolsAskedFor(claudeTools, 'hello', true))).toEqual(['Agent']);
    expect(names(toolsAskedFor(claudeTools, 'go [parallel]', false))).toEqual(['Agent', 'Bash', 'Glob']);
  });
});

describe('arguments from the prompt', () => {
  it("puts the prompt's path in a path property and its backticked span in a command", () => {
    const read = { name: 'Read', parameters: schema({ file_path: { type: 'string' }, limit: { type: 'number' } }, ['file_path']) };
    expect(argsFor(read, 'Read the file /tmp/x/notes.txt, then answer.')).toEqual({ file_path: '/tmp/x/notes.txt' });
    const shell = { name: 'shell', parameters: schema({ command: { type: 'array', items: { type: 'string' } } }) };
    expect(argsFor(shell, 'use the shell tool to run `head -n 1 notes.txt`')).toEqual({ command: ['bash', '-lc', 'head -n 1 notes.txt'] });
    const exec = { name: 'exec_command', parameters: schema({ cmd: { type: 'string' } }) };
    expect(argsFor(exec, 'run `ls`')).toEqual({ cmd: 'ls' });
  });

  it('falls back to the schema-built value', () => {
    const weather = { name: 'get_weather', parameters: schema({ city: { type: 'string' } }) };
    expect(argsFor(weather, 'weather in Paris?')).toEqual({ city: 'Paris' });
  });
});
