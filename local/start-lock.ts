import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The lock's file name inside the state directory (`.local/npm-start.pid`): the running start's pid. */
export const START_LOCK_FILE = 'npm-start.pid';

/** A second `npm start` in the same checkout: the message says which process holds it and what to do. */
export class AlreadyRunningError extends Error {
  override name = 'AlreadyRunningError';
  constructor(
    readonly pid: number,
    lockFile: string,
  ) {
    super(
      `modelmux is already running from this checkout (pid ${pid}, ${lockFile}). ` +
        `Use that one, or stop it first (Ctrl-C in its terminal, or kill ${pid}); ` +
        'a second start would share its DynamoDB Local data and Cognito files and break it.',
    );
  }
}

/** Whether a process with this pid exists (EPERM: it exists but belongs to another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the state directory for this process before anything else touches it: creates
 * `<stateDir>/npm-start.pid` holding our pid, atomically (`wx`). A lock left by a process that is gone
 * (a crash, a kill -9) is taken over; one held by a live process throws AlreadyRunningError and leaves
 * the directory as it was. Returns the release function (removes the file if it is still ours), which
 * also runs at process exit.
 */
export function acquireStartLock(stateDir: string): () => void {
  mkdirSync(stateDir, { recursive: true });
  const lockFile = join(stateDir, START_LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      const holder = Number.parseInt(readFileSync(lockFile, 'utf8'), 10);
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) throw new AlreadyRunningError(holder, lockFile);
      rmSync(lockFile, { force: true }); // stale: its process is gone
    }
  }
  const release = (): void => {
    try {
      if (Number.parseInt(readFileSync(lockFile, 'utf8'), 10) === process.pid) rmSync(lockFile, { force: true });
    } catch {
      // already gone
    }
  };
  process.once('exit', release);
  return release;
}
