/** What every bench phase works with: the running system, the two targets, pools, CPU accounting. */
import type { Pools } from './pools';
import type { ProcessSet } from './process-cpu';
import type { SystemUnderTest } from './system-under-test';
import type { Target, TargetName } from './targets';

/** Shared state of one bench run. */
export interface BenchContext {
  sut: SystemUnderTest;
  targets: Record<TargetName, Target>;
  pools: Pools;
  /** Process groups whose CPU time is sampled around each run (client, gateway, simulator, dynamodb). */
  processes: ProcessSet;
  /** Progress output (stderr). */
  log: (message: string) => void;
}
