/**
 * Providers whose own keys a user can attach (bring-your-own-key). The spec allows only keys that
 * begin with `sk-`, which these providers issue: OpenAI (`sk-…`, `sk-proj-…`), Anthropic
 * (`sk-ant-…`) and DeepSeek (`sk-…`). The ids are the gateway's provider names.
 */
export interface ByokProvider {
  id: string;
  name: string;
  /** What their keys look like, for the placeholder. */
  example: string;
  /** Which catalogue models it serves, in words. */
  models: string;
}

export const BYOK_PROVIDERS: readonly ByokProvider[] = [
  { id: 'openai', name: 'OpenAI', example: 'sk-proj-…', models: 'GPT-4o, GPT-4o mini, o3-mini and embeddings' },
  { id: 'anthropic', name: 'Anthropic', example: 'sk-ant-…', models: 'Claude' },
  { id: 'deepseek', name: 'DeepSeek', example: 'sk-…', models: 'DeepSeek V3, R1 and embeddings' },
];

/**
 * The providers to offer: the API's list when it sends one (its order), named from the table above
 * (an unknown id is shown as it is), plus any provider a key is attached for.
 */
export function providersToShow(fromApi: readonly string[] | undefined, attached: readonly string[]): ByokProvider[] {
  const ids = [...(fromApi ?? BYOK_PROVIDERS.map((p) => p.id))];
  for (const id of attached) if (!ids.includes(id)) ids.push(id);
  return ids.map((id) => BYOK_PROVIDERS.find((p) => p.id === id) ?? { id, name: id, example: 'sk-…', models: '' });
}

/** The spec's rule: only keys beginning with `sk-`. */
export function isAcceptedProviderKey(key: string): boolean {
  return key.startsWith('sk-') && key.length > 3;
}
