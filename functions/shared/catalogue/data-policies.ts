import type { ProviderName } from '../providers/manifest';
import type { DataPolicyData } from './schema';

/**
 * What each provider does with the prompts and answers of API traffic sent with the platform's keys, as
 * its own terms say: whether it may use them to train models (`training`), and whether it keeps them
 * after answering (`retainsPrompts`, e.g. abuse-monitoring logs). Read on the date and from the page in
 * `source`; the reasoning and the pages: docs/provider-routing.md § "Data policies". A target can
 * override its provider's facts (schema.ts `dataPolicy`).
 *
 * Routing reads them for OpenRouter's `provider.data_collection: "deny"` (only targets with
 * `training: false`) and `provider.zdr: true` (only targets with `retainsPrompts: false`). When a
 * provider's terms are unclear, the facts say the less private thing, so a filter never lets a request
 * through on a guess.
 */
const KNOWN_POLICIES: Readonly<Partial<Record<ProviderName, DataPolicyData>>> = {
  openai: {
    training: false,
    retainsPrompts: true,
    readOn: '2026-11-26',
    source:
      'platform.openai.com/docs/guides/your-data: API data not used for training by default; abuse-monitoring logs kept up to 30 days; zero retention only by approved arrangement',
  },
  anthropic: {
    training: false,
    retainsPrompts: true,
    readOn: '2026-11-26',
    source: 'privacy.anthropic.com (commercial terms): API inputs/outputs not used for training; kept up to 30 days; zero retention only by agreement',
  },
  gemini: {
    training: false,
    retainsPrompts: true,
    readOn: '2026-11-26',
    source:
      'ai.google.dev/gemini-api/terms (paid services): prompts and responses not used to improve products; logged for a limited period for abuse monitoring',
  },
  deepseek: {
    training: true,
    retainsPrompts: true,
    readOn: '2026-11-26',
    source: 'platform.deepseek.com privacy policy: inputs may be used to improve and train services; stored on servers in the PRC',
  },
  minimax: {
    training: true,
    retainsPrompts: true,
    readOn: '2026-11-26',
    source: 'platform.minimax.io terms: no published commitment against training on API data found; treated as may-train',
  },
  together: {
    training: false,
    retainsPrompts: true,
    readOn: '2026-11-26',
    source: 'together.ai privacy/terms: customer data not used for training by default; prompt storage is an account setting (on unless opted out)',
  },
  deepinfra: {
    training: false,
    retainsPrompts: false,
    readOn: '2026-11-26',
    source: 'deepinfra.com/docs/data: inputs and outputs are not stored (zero retention) and not used for training',
  },
};

/**
 * A provider whose terms nobody has read yet (a new manifest entry) gets the less private facts: it may
 * train and keeps prompts, so `data_collection: "deny"` and `zdr` never route to it on a guess.
 */
const UNREAD_POLICY: DataPolicyData = {
  training: true,
  retainsPrompts: true,
  readOn: '2026-11-27',
  source: 'not read yet: treated as may-train and retaining (docs/provider-routing.md § "Data policies")',
};

/** The data policy of `provider`'s API traffic: its terms as read, else {@link UNREAD_POLICY}. */
export function providerDataPolicy(provider: ProviderName): DataPolicyData {
  return KNOWN_POLICIES[provider] ?? UNREAD_POLICY;
}
