import type { ChatCompletionRequest } from '../../openai/chat-request';

/**
 * OpenAI `response_format` on Anthropic. The Messages API at `anthropic-version: 2023-06-01` has no
 * JSON mode (its compatibility endpoint ignores the field, providers.md §2.9), so modelmux asks in
 * the system prompt instead: best effort, not a guarantee. The output is passed on unchanged; nothing
 * is parsed, repaired or refused after the fact.
 */

/** The system instruction for the requested format, or undefined for plain text / no format. */
export function jsonModeInstruction(format: ChatCompletionRequest['response_format']): string | undefined {
  switch (format?.type) {
    case undefined:
    case 'text':
      return undefined;
    case 'json_object':
      return 'Respond with a single valid JSON object and nothing else: no prose and no code fences before or after it.';
    case 'json_schema': {
      const schema = format.json_schema.schema;
      const described = format.json_schema.description ? ` (${format.json_schema.description})` : '';
      return schema === undefined
        ? `Respond with a single valid JSON object named "${format.json_schema.name}"${described} and nothing else: no prose and no code fences.`
        : `Respond with a single valid JSON object${described} that conforms to this JSON Schema, and nothing else: no prose and no code fences.\n${JSON.stringify(schema)}`;
    }
    default:
      return undefined;
  }
}
