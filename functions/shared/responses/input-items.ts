import type { ChatMessage } from '../openai/chat-messages';
import type { MessageToolCall } from '../openai/chat-tools';
import type { UserContentPart } from '../openai/chat-messages';
import { InvalidRequestError } from '../errors/gateway-errors';
import { unsupportedParameter } from '../providers/unsupported-parameters';
import type { CreateResponseRequest, InputItem, MessagePart } from './request';
import { flatToolName } from './namespaced-tools';

/**
 * The Responses `instructions` and `input` as chat messages (OpenAI's Responses → Chat Completions
 * migration guide, "Messages vs. Items"):
 *
 * - `instructions` → a leading system message; a string `input` → one user message;
 * - a message item → a message of its role: `input_text` → text part, `input_image` → `image_url`
 *   part, `input_file` → `file` part; an assistant's `output_text` parts → its text, `refusal` → its refusal;
 * - `function_call` items → `tool_calls` of the assistant message they follow (a namespaced call
 *   under its flat name, namespaced-tools.ts; a new message when none
 *   is open), `function_call_output` → a `tool` message;
 * - a `reasoning` item → `reasoning_content` of the next assistant message (each adapter replays it
 *   as its provider allows, as for chat clients).
 *
 * `item_reference` items must have been replaced by the items they name before this
 * (conversation-state.ts reads them from the stored responses).
 * @throws InvalidRequestError (400, `param` = `input[i]…`) for what the chat core cannot carry:
 *   uploaded-file ids, file URLs, parts a role cannot have, an unresolved `item_reference`.
 */
export function toChatMessages(req: Pick<CreateResponseRequest, 'instructions' | 'input'>): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (req.instructions != null && req.instructions !== '') messages.push({ role: 'system', content: req.instructions });
  if (typeof req.input === 'string') {
    messages.push({ role: 'user', content: req.input });
    return messages;
  }
  let reasoning: string | undefined;
  let open: Extract<ChatMessage, { role: 'assistant' }> | undefined;
  const assistant = (m: Extract<ChatMessage, { role: 'assistant' }>): typeof m => {
    if (reasoning !== undefined) m.reasoning_content = reasoning;
    reasoning = undefined;
    messages.push(m);
    return m;
  };
  req.input.forEach((item, i) => {
    switch (item.type) {
      case 'message':
        if (item.role === 'assistant') open = assistant(assistantMessage(item, i));
        else {
          messages.push(promptMessage(item, i));
          open = undefined;
        }
        return;
      case 'function_call': {
        const name = flatToolName(item.name, item.namespace);
        const call: MessageToolCall = { id: item.call_id, type: 'function', function: { name, arguments: item.arguments } };
        open ??= assistant({ role: 'assistant', content: null });
        open.tool_calls = [...(open.tool_calls ?? []), call];
        return;
      }
      case 'function_call_output':
        messages.push({ role: 'tool', tool_call_id: item.call_id, content: toolOutput(item.output, i) });
        open = undefined;
        return;
      case 'reasoning': {
        const text = [...item.summary.map((s) => s.text), ...(item.content ?? []).map((c) => c.text)].join('\n');
        if (text !== '') reasoning = reasoning === undefined ? text : `${reasoning}\n${text}`;
        return;
      }
      case 'item_reference':
        throw new InvalidRequestError(`'input[${i}]' (${item.id}) is an item reference that was not resolved; send the item itself.`, {
          param: `input[${i}]`,
          code: 'invalid_value',
        });
    }
  });
  return messages;
}

type MessageItem = Extract<InputItem, { type: 'message' }>;

function promptMessage(item: MessageItem, i: number): ChatMessage {
  if (typeof item.content === 'string') return item.role === 'user' ? { role: 'user', content: item.content } : { role: item.role, content: item.content };
  const parts = item.content.map((p, j) => promptPart(p, `input[${i}].content[${j}]`));
  if (item.role === 'user') return { role: 'user', content: parts };
  return {
    role: item.role,
    content: parts.map((p, j) => {
      if (p.type !== 'text')
        throw new InvalidRequestError(`A ${item.role} message takes text only; 'input[${i}].content[${j}]' is ${p.type}.`, {
          param: `input[${i}].content[${j}]`,
          code: 'invalid_value',
        });
      return p;
    }),
  };
}

function promptPart(p: MessagePart, param: string): UserContentPart {
  switch (p.type) {
    case 'input_text':
      return { type: 'text', text: p.text };
    case 'input_image': {
      if (p.image_url == null || p.image_url === '') {
        throw unsupportedParameter(
          `${param}.file_id`,
          'Uploaded files are not available through modelmux; send the image as image_url (an https or data URL).',
        );
      }
      if (p.detail === 'original') throw unsupportedParameter(`${param}.detail`, "Use 'low', 'high' or 'auto'.");
      return { type: 'image_url', image_url: p.detail === undefined ? { url: p.image_url } : { url: p.image_url, detail: p.detail } };
    }
    case 'input_file': {
      if (p.file_url !== undefined) throw unsupportedParameter(`${param}.file_url`, 'Send the file as file_data (a base64 data URL) instead.');
      if (p.file_data === undefined && p.file_id == null)
        throw new InvalidRequestError(`Missing required parameter: '${param}.file_data'.`, { param: `${param}.file_data`, code: 'missing_required_parameter' });
      const file: { file_data?: string; file_id?: string; filename?: string } = {};
      if (p.file_data !== undefined) file.file_data = p.file_data;
      if (p.file_id != null) file.file_id = p.file_id;
      if (p.filename !== undefined) file.filename = p.filename;
      return { type: 'file', file };
    }
    default:
      throw new InvalidRequestError(`'${param}' is an ${p.type} part, which only assistant messages carry.`, { param, code: 'invalid_value' });
  }
}

function assistantMessage(item: MessageItem, i: number): Extract<ChatMessage, { role: 'assistant' }> {
  if (typeof item.content === 'string') return { role: 'assistant', content: item.content };
  const texts: string[] = [];
  let refusal: string | undefined;
  item.content.forEach((p, j) => {
    if (p.type === 'output_text') texts.push(p.text);
    else if (p.type === 'refusal') refusal = p.refusal;
    else
      throw new InvalidRequestError(`An assistant message takes output_text and refusal parts; 'input[${i}].content[${j}]' is ${p.type}.`, {
        param: `input[${i}].content[${j}]`,
        code: 'invalid_value',
      });
  });
  const m: Extract<ChatMessage, { role: 'assistant' }> = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (refusal !== undefined) m.refusal = refusal;
  return m;
}

function toolOutput(output: Extract<InputItem, { type: 'function_call_output' }>['output'], i: number): string {
  if (typeof output === 'string') return output;
  return output
    .map((p, j) => {
      if (p.type !== 'input_text') throw unsupportedParameter(`input[${i}].output[${j}]`, 'Function call outputs carry text only through modelmux.');
      return p.text;
    })
    .join('');
}
