/**
 * The schema each JSON-body route validates with, for bench/validation-cpu.ts (the account API's own
 * schemas are private to their routes; these are the same shapes, re-exported where they live).
 */
import { chatCompletionRequest } from '../functions/shared/openai/chat-request';
import { embeddingsRequest } from '../functions/shared/openai/embeddings';
import { createResponseRequest } from '../functions/shared/responses/request';
import { keyCreateBody } from '../functions/shared/account-api/keys-routes';
import { byokPutBody } from '../functions/shared/account-api/byok-routes';
import type { BodyRoute } from './adversarial-bodies';

/** The zod schema `route` parses its body with. */
export function schemaOf(route: BodyRoute) {
  switch (route) {
    case 'chat':
      return chatCompletionRequest;
    case 'responses':
      return createResponseRequest;
    case 'embeddings':
      return embeddingsRequest;
    case 'keys':
      return keyCreateBody;
    case 'byok':
      return byokPutBody;
  }
}
