/**
 * CPU time per process from /proc (Linux), to split where the machine's cycles went during a run:
 * load generator, gateway, simulator, DynamoDB Local. Elsewhere (no /proc) every reading is empty.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on every Linux we run on). */
const TICKS_PER_SECOND = 100;

/**
 * user + system CPU time of one process, ms (with `withChildren`, plus that of its children that have
 * exited and been waited for); undefined when it is gone or /proc is missing.
 */
export function cpuTimeMs(pid: number, withChildren = false): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name (which may contain spaces): state is field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    const own = (fields[11] ?? 0) + (fields[12] ?? 0);
    const children = withChildren ? (fields[13] ?? 0) + (fields[14] ?? 0) : 0;
    return ((own + children) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** CPU time all cores spent busy since boot (user, nice, system, irq, softirq, steal), ms; undefined without /proc. */
export function machineBusyMs(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    return (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Direct children of `parentPid` whose command name is `comm` (e.g. the `java` of DynamoDB Local). */
export function childrenNamed(parentPid: number, comm: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parentPid && name === comm) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Named processes whose CPU is sampled together. */
export type ProcessSet = Record<string, number[]>;

/** Group name of everything else running on the machine (other users' processes, the kernel). */
export const OTHER_PROCESSES = 'other';
/** Internal key of the machine-wide total in a sample. */
const MACHINE = '(machine)';

/** CPU ms of each named group, and of the whole machine, now. */
export function sampleCpu(processes: ProcessSet): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, pids] of Object.entries(processes)) out[name] = pids.reduce((sum, pid) => sum + (cpuTimeMs(pid) ?? 0), 0);
  out[MACHINE] = machineBusyMs() ?? Number.NaN;
  return out;
}

/**
 * CPU ms each group used between two samples, plus {@link OTHER_PROCESSES}: machine busy time not
 * spent by any group (someone else's work on the same cores; 0 when /proc/stat is missing).
 */
export function cpuDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  let ours = 0;
  for (const [name, value] of Object.entries(after)) {
    if (name === MACHINE) continue;
    out[name] = value - (before[name] ?? 0);
    ours += out[name] ?? 0;
  }
  const machine = (after[MACHINE] ?? Number.NaN) - (before[MACHINE] ?? Number.NaN);
  out[OTHER_PROCESSES] = Number.isFinite(machine) ? Math.max(0, machine - ours) : 0;
  return out;
}
