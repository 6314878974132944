/**
 * Upstream models their providers retire, with the date and the successor they name: from that
 * instant a catalogue target naming the retired id is served by the successor (a catalogue model), and
 * the answer's `x-modelmux-model` names the successor (routing/attempt-plan.ts). Sources: the
 * providers' deprecation pages as quoted in docs/providers.md (§2.8 Anthropic), and the retirement
 * table Claude Code 2.1.332 prints (docs/prices.md "Retirements"). Ids retired before the catalogue
 * was written are not targets at all (test/catalogue/retired-ids.test.ts).
 */
export interface Retirement {
  /** Target key `provider:upstreamModel`. */
  key: string;
  /** When requests to it start failing upstream, ISO 8601 UTC. */
  retiresAt: string;
  /** The catalogue model that serves it from then on (the provider's named successor). */
  successorModel: string;
  source: string;
}

/** Every scheduled or past retirement of a catalogue target. */
export const RETIREMENTS: readonly Retirement[] = [
  {
    key: 'anthropic:claude-sonnet-4-5',
    retiresAt: '2026-11-30T00:00:00Z',
    successorModel: 'claude-sonnet-5-5',
    source: 'Claude Code 2.1.332 model table: Claude Sonnet 4.5 retires 2026-11-30, current Sonnet claude-sonnet-5-5 (docs/prices.md "Retirements")',
  },
];
