import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../functions/shared/errors/gateway-errors';
import { parseJsonBody } from '../../functions/shared/openai/parse-body';
import { createResponseRequest, unknownParameter } from '../../functions/shared/responses/request';
import { toChatRequest } from '../../functions/shared/responses/to-chat';

/** A Responses body as the route reads it, translated to the chat request the core runs. */
const chat = (body: Record<string, unknown>) =>
  toChatRequest(parseJsonBody(JSON.stringify({ model: 'gpt-4o', ...body }), createResponseRequest, unknownParameter));

function refusal(body: Record<string, unknown>): InvalidRequestError {
  try {
    chat(body);
  } catch (err) {
    if (err instanceof InvalidRequestError) return err;
    throw err;
  }
  throw new Error('expected a 400');
}

describe('Responses request → chat request', () => {
  it('maps instructions and a string input to a system and a user message, with the spec temperature', () => {
    expect(chat({ instructions: 'Be brief.', input: 'Hi' })).toMatchObject({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      temperature: 0.7,
      stream: false,
    });
  });

  it('groups function calls on the assistant turn they follow, reasoning included, and tool outputs as tool messages', () => {
    const req = chat({
      input: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'two cities' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'c2', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'c1', output: '21' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: '25' }] },
        { type: 'function_call', call_id: 'c3', name: 'get_time', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c3', output: 'noon' },
      ],
    });
    expect(req.messages).toEqual([
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        reasoning_content: 'two cities',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '21' },
      { role: 'tool', tool_call_id: 'c2', content: '25' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c3', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c3', content: 'noon' },
    ]);
  });

  it('maps parts: input_text, input_image (with detail), input_file as file_data; an assistant refusal', () => {
    const req = chat({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'high' },
            { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
          ],
        },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] },
      ],
    });
    expect(req.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } },
          { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
        ],
      },
      { role: 'assistant', content: null, refusal: 'no' },
    ]);
  });

  it('maps tools, tool_choice, text.format, verbosity, effort, max_output_tokens and logprobs', () => {
    const req = chat({
      input: 'x',
      tools: [{ type: 'function', name: 'f', description: 'd', parameters: { type: 'object' }, strict: true }],
      tool_choice: { type: 'function', name: 'f' },
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true }, verbosity: 'low' },
      reasoning: { effort: 'high' },
      max_output_tokens: 50,
      include: ['message.output_text.logprobs'],
      top_logprobs: 3,
      stream: true,
      metadata: { run: '1' },
      store: true,
    });
    expect(req).toMatchObject({
      tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
      verbosity: 'low',
      reasoning_effort: 'high',
      max_completion_tokens: 50,
      logprobs: true,
      top_logprobs: 3,
      stream: true,
      stream_options: { include_usage: true },
    });
    // Metadata stays with the response; store changes nothing upstream.
    expect(req).not.toHaveProperty('metadata');
    expect(req).not.toHaveProperty('store');
  });

  it.each([
    [{ conversation: 'conv_1' }, 'conversation'],
    [{ prompt: { id: 'pmpt_1' } }, 'prompt'],
    [{ background: true }, 'background'],
    [{ truncation: 'auto' }, 'truncation'],
    [{ max_tool_calls: 3 }, 'max_tool_calls'],
    [{ include: ['file_search_call.results'] }, 'include'],
    [{ tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }, 'tools[0].type'],
    [{ tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] } }, 'tool_choice'],
    [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0]'],
    [{ input: [{ id: 'msg_1' }] }, 'input[0]'],
    [{ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }, 'input[0].content[0].file_id'],
    [{ input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] }] }, 'input[0].content[0].file_url'],
    [{ input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }] }, 'input[0].content[0]'],
    [{ input: [{ role: 'user', content: [{ type: 'output_text', text: 'x' }] }] }, 'input[0].content[0]'],
    [{ input: [{ role: 'assistant', content: [{ type: 'input_text', text: 'x' }] }] }, 'input[0].content[0]'],
  ])('refuses %j with a 400 naming %s', (body, param) => {
    expect(refusal({ input: 'x', ...body })).toMatchObject({ status: 400, param });
  });

  it('leaves previous_response_id to the Responses layer, and refuses an item reference that reached it unresolved', () => {
    expect(toChatRequest(createResponseRequest.parse({ model: 'gpt-4o', input: 'x', previous_response_id: 'resp_1' })).messages).toEqual([
      { role: 'user', content: 'x' },
    ]);
    expect(refusal({ input: [{ type: 'item_reference', id: 'msg_1' }] }).message).toMatch(/item reference that was not resolved/);
  });

  it('names an unknown item type, and an unknown parameter at any depth, with the Responses wording', () => {
    expect(refusal({ input: [{ type: 'web_search_call', id: 'ws_1' }] })).toMatchObject({ param: 'input[0].type' });
    expect(refusal({ input: 'x', text: { format: { type: 'json_schema', name: 'n', schema: {}, extra: 1 } } })).toMatchObject({
      message: "Unknown parameter: 'text.format.extra'.",
      code: 'unknown_parameter',
    });
  });
});
