import { InvalidRequestError } from '../errors/gateway-errors';
import type { CreateResponseRequest } from './request';

/**
 * Function tools grouped in a `namespace` (OpenAI's `NamespaceToolParam`; Codex CLI sends its MCP
 * and dynamic tools so: `{type: "namespace", name, description, tools: [{type: "function", name, …}]}`).
 * Chat has no namespaces, so each becomes the function `<namespace>__<name>` upstream, and a call of
 * that name comes back as `{name, namespace}` (OpenAI's `FunctionToolCall.namespace`), buffered and
 * streamed; a `function_call` input item with a `namespace` goes upstream under the flat name again.
 */

/** Between a namespace and a tool's name in the flat upstream name. */
const SEPARATOR = '__';
/** Longest function name chat providers take (OpenAI's 64, the strictest). */
const MAX_FLAT_NAME = 64;

/** The upstream name of `name` in `namespace` (the name itself without one). */
export function flatToolName(name: string, namespace?: string | null): string {
  return namespace == null || namespace === '' ? name : `${namespace}${SEPARATOR}${name}`;
}

/**
 * The flat name of tool `name` of the namespace at `tools[index]`.
 * @throws InvalidRequestError when the flat name is longer than chat providers take.
 */
export function checkedFlatName(namespace: string, name: string, index: number, inner: number): string {
  const flat = flatToolName(name, namespace);
  if (flat.length > MAX_FLAT_NAME)
    throw new InvalidRequestError(
      `Invalid 'tools[${index}].tools[${inner}].name': a namespaced tool reaches the model as '<namespace>${SEPARATOR}<name>', and '${flat}' is longer than ${MAX_FLAT_NAME} characters.`,
      { param: `tools[${index}].tools[${inner}].name`, code: 'invalid_value' },
    );
  return flat;
}

/** A call's name as the client declared it: `{name, namespace}` for a flattened namespaced tool, else the name alone. */
export function declaredToolName(body: CreateResponseRequest, flat: string): { name: string; namespace?: string } {
  for (const tool of body.tools ?? []) {
    if (tool.type !== 'namespace') continue;
    const inner = tool.tools.find((t) => flatToolName(t.name, tool.name) === flat);
    if (inner !== undefined) return { name: inner.name, namespace: tool.name };
  }
  return { name: flat };
}
