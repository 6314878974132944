/** Everything one bench run produced, as the report renders it. */
import type { FunctionBundle } from './bundle';
import type { ColdStart } from './cold-start';
import type { GoalCheck } from './goals';
import type { Machine } from './machine';
import type { HotPathProfile } from './profile-phase';
import type { ProfileSummary } from './profile-summary';
import type { BufferedRow, StreamRow } from './results';
import type { StoreCallsPerRequest } from './store-calls-phase';
import type { StoreCallSnapshot } from './store-call-counter';

/** Cold-start medians by function name, with and without `--enable-source-maps`. */
export interface ColdStartFigures {
  empty: ColdStart;
  sourceMaps: Record<string, ColdStart>;
  plain: Record<string, ColdStart>;
  /** CPU other processes on the machine used during these loads, cores. */
  otherCores: number;
}

/** A finished run. */
export interface BenchReport {
  machine: Machine;
  /** Wall time of the whole bench, ms. */
  runtimeMs: number;
  goals: GoalCheck[];
  buffered: BufferedRow[];
  streams: StreamRow[];
  storeCalls: StoreCallsPerRequest[];
  /** DynamoDB calls over all measured buffered rounds, and the gateway requests they served. */
  amortizedStoreCalls: { snapshot: StoreCallSnapshot; requests: number };
  bundles: FunctionBundle[];
  coldStarts: ColdStartFigures;
  loadProfile: ProfileSummary | undefined;
  hotProfile: HotPathProfile;
}
