/** The machine a run happened on, for the report. */
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';

/** Hardware and runtime of this run. */
export interface Machine {
  cores: number;
  /** `model name` from /proc/cpuinfo (falls back to Node's view). */
  cpuModel: string;
  memoryGb: number;
  kernel: string;
  node: string;
  /** ISO date-time of the run (UTC). */
  date: string;
}

function cpuModelName(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
    if (line !== undefined) return line.slice(line.indexOf(':') + 1).trim();
  } catch {
    // not Linux
  }
  return cpus()[0]?.model ?? 'unknown';
}

/** Describes this machine now. */
export function describeMachine(): Machine {
  return {
    cores: cpus().length,
    cpuModel: cpuModelName(),
    memoryGb: Math.round(totalmem() / 1024 ** 3),
    kernel: release(),
    node: process.version,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}
