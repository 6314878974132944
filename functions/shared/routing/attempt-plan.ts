import type { Catalogue, CatalogueEntry, CatalogueTarget } from '../catalogue/catalogue';
import type { ChatCompletionRequest } from '../openai/chat-request';
import { InvalidRequestError, UpstreamUnavailableError } from '../openai/errors';
import { providerSpec, resolveEndpoint } from '../providers/registry';
import type { ProviderAdapter, ProviderEndpoint } from '../providers/types';
import type { TimeoutOverrides } from './timeouts';

/**
 * The ordered list of upstream targets one request may try: the model's own targets, then each
 * equivalent's targets (catalogue order), each at most once, skipping providers with no key and
 * targets that lack a capability the request uses.
 */

/** One place the request can be sent. */
export interface Attempt {
  /** The public model whose target this is (differs from the requested one after a fallback). */
  publicModel: string;
  target: CatalogueTarget;
  endpoint: ProviderEndpoint;
  adapter: ProviderAdapter;
  /** The provider's attempt time limits (routing/timeouts.ts). */
  providerTimeouts: TimeoutOverrides | undefined;
}

/** Capabilities a chat request needs, derived from its content. */
export interface RequiredCapabilities {
  vision: boolean;
  tools: boolean;
}

/** What the request uses that not every model has. */
export function requiredCapabilities(req: ChatCompletionRequest): RequiredCapabilities {
  const vision = req.messages.some(
    (m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url'),
  );
  const tools = (req.tools?.length ?? 0) > 0;
  return { vision, tools };
}

function supports(target: CatalogueTarget, need: RequiredCapabilities): boolean {
  return (!need.vision || target.capabilities.vision) && (!need.tools || target.capabilities.tools);
}

/**
 * Builds the plan.
 * @throws InvalidRequestError (400) when the requested model itself lacks a capability the request
 *   uses (named in the message), so the client hears it plainly rather than an upstream's error.
 * @throws UpstreamUnavailableError (503) when no target of the model or its equivalents has a key.
 */
export function planAttempts(
  entry: CatalogueEntry,
  catalogue: Catalogue,
  credentials: Readonly<Record<string, string | undefined>>,
  need: RequiredCapabilities = { vision: false, tools: false },
): Attempt[] {
  if (!entry.targets.some((t) => supports(t, need))) {
    const missing = need.vision && !entry.targets.some((t) => t.capabilities.vision) ? 'image input (vision)' : 'tool calling';
    throw new InvalidRequestError(`The model \`${entry.id}\` does not support ${missing}.`, {
      param: need.vision && missing.startsWith('image') ? 'messages' : 'tools',
      code: 'unsupported_capability',
    });
  }
  const plan: Attempt[] = [];
  const seen = new Set<string>();
  const entries = [entry, ...entry.equivalents.map((id) => catalogue.get(id)).filter((e): e is CatalogueEntry => e !== undefined)];
  for (const e of entries) {
    for (const target of e.targets) {
      if (seen.has(target.key) || !supports(target, need)) continue;
      const endpoint = resolveEndpoint(target.provider, credentials);
      if (endpoint === undefined) continue;
      seen.add(target.key);
      const spec = providerSpec(target.provider);
      plan.push({ publicModel: e.id, target, endpoint, adapter: spec.adapter, providerTimeouts: spec.timeouts });
    }
  }
  if (plan.length === 0) {
    throw new UpstreamUnavailableError(503, `No upstream provider is configured for the model \`${entry.id}\`.`);
  }
  return plan;
}
