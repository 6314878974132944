import { PROVIDER_MANIFEST, type ProviderManifestEntry } from '../../../functions/shared/providers/manifest';

/**
 * Providers whose own keys a user can attach (bring-your-own-key): the manifest's entries with a `byok`
 * label (functions/shared/providers/manifest.ts, bundled at web build; plain data, no imports). The
 * spec allows only keys that begin with `sk-`. The ids are the gateway's provider names.
 */
export interface ByokProvider {
  id: string;
  name: string;
  /** What their keys look like, for the placeholder. */
  example: string;
  /**
   * The catalogue models its key serves, as the API lists them (`served_models`, derived from the
   * catalogue: never typed here, so the page cannot claim a model another provider serves); empty
   * when the API sent none.
   */
  models: readonly string[];
}

/** Names and key shapes of the providers the page knows (the manifest's); which models they serve comes from the API. */
const BYOK_PROVIDERS: ReadonlyArray<Omit<ByokProvider, 'models'>> = (PROVIDER_MANIFEST as readonly ProviderManifestEntry[]).flatMap((p) =>
  p.byok === undefined ? [] : [{ id: p.name, name: p.byok.label, example: p.byok.keyExample }],
);

/**
 * The providers to offer: the API's list when it sends one (its order), named from the table above
 * (an unknown id is shown as it is), plus any provider a key is attached for, each with the models
 * the API says its key serves.
 */
export function providersToShow(
  fromApi: readonly string[] | undefined,
  attached: readonly string[],
  servedModels: Readonly<Record<string, readonly string[]>> = {},
): ByokProvider[] {
  const ids = [...(fromApi ?? BYOK_PROVIDERS.map((p) => p.id))];
  for (const id of attached) if (!ids.includes(id)) ids.push(id);
  return ids.map((id) => ({ ...(BYOK_PROVIDERS.find((p) => p.id === id) ?? { id, name: id, example: 'sk-…' }), models: servedModels[id] ?? [] }));
}

/** The spec's rule: only keys beginning with `sk-`. */
export function isAcceptedProviderKey(key: string): boolean {
  return key.startsWith('sk-') && key.length > 3;
}
