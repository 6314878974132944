/**
 * Parent side of the bench's child processes (gateway, simulator): fork a TypeScript entry under
 * tsx with an IPC channel, wait for its ready message, send it commands, and make sure it dies with
 * the bench (normal end, error, Ctrl-C). Output goes to a log file, not a pipe, so a chatty child
 * (one JSON log line per request) never blocks on a full pipe or costs the load generator CPU.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { asChildMessage, type CommandMessage } from './ipc';

/** Options of {@link startChild}. */
export interface ChildOptions {
  /** Shown in errors. */
  label: string;
  /** TypeScript entry, absolute path. */
  entry: string;
  /** Complete environment of the child. */
  env: NodeJS.ProcessEnv;
  /** Where stdout and stderr go. */
  logFile: string;
  /** Extra Node flags (e.g. `--cpu-prof`). */
  nodeFlags?: string[];
  /** How long the child may take to say it is ready, ms. Default 60,000. */
  readyTimeoutMs?: number;
}

/** A running child. */
export interface Child {
  /** What the child sent in its ready message. */
  info: unknown;
  pid: number;
  /** Runs a command in the child and resolves with its result; rejects after 60 s without an answer. */
  call(name: string, arg?: unknown): Promise<unknown>;
  /** SIGTERM, then SIGKILL after `graceMs` (default 5,000 ms); resolves once it has exited. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

/** Longest a child may take to answer one command, ms (a profile stop writes a few MB). */
const COMMAND_TIMEOUT_MS = 60_000;

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills every child still running, synchronously (for `process.on('exit')`). */
export function killAllChildren(): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  running.clear();
}

/** The last `bytes` of a log file, for error messages. */
export function logTail(file: string, bytes = 3_000): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.slice(-bytes);
  } catch {
    return '(no log)';
  }
}

/**
 * Forks `entry` under tsx (`node --import tsx`) and resolves once it sent `{type: 'ready'}`.
 * @throws Error with the child's log tail when it exits or times out before it is ready.
 */
export async function startChild(opts: ChildOptions): Promise<Child> {
  if (!exitHookInstalled) {
    process.once('exit', killAllChildren);
    exitHookInstalled = true;
  }
  const log = openSync(opts.logFile, 'w');
  const child = fork(opts.entry, [], {
    env: opts.env,
    execArgv: ['--import', 'tsx', ...(opts.nodeFlags ?? [])],
    stdio: ['ignore', log, log, 'ipc'],
  });
  closeSync(log);
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));

  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let readyInfo: ((info: unknown) => void) | undefined;
  const ready = new Promise<unknown>((resolve) => (readyInfo = resolve));
  child.on('message', (raw: unknown) => {
    const msg = asChildMessage(raw);
    if (msg?.type === 'ready') readyInfo?.(msg.info);
    else if (msg?.type === 'reply') {
      const waiter = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.ok) waiter?.resolve(msg.result);
      else waiter?.reject(new Error(`${opts.label}: ${msg.error}`));
    }
  });
  void exited.then(() => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${opts.label} exited (code ${child.exitCode ?? child.signalCode}); log:\n${logTail(opts.logFile)}`));
    pending.clear();
  });

  const stop = async (graceMs = 5_000): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
  };

  const timeoutMs = opts.readyTimeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    ready.then((info) => ({ kind: 'ready' as const, info })),
    exited.then(() => ({ kind: 'exited' as const })),
    new Promise<{ kind: 'timeout' }>((resolve) => (timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (outcome.kind !== 'ready') {
    await stop(1_000);
    throw new Error(`${opts.label} ${outcome.kind === 'exited' ? 'exited' : `was not ready within ${timeoutMs} ms`} before it was ready; log:\n${logTail(opts.logFile)}`);
  }
  if (child.pid === undefined) throw new Error(`${opts.label}: no pid`);

  return {
    info: outcome.info,
    pid: child.pid,
    call: (name, arg) =>
      new Promise<unknown>((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${opts.label}: no answer to ${name} within ${COMMAND_TIMEOUT_MS} ms`));
        }, COMMAND_TIMEOUT_MS);
        const settle = <T>(fn: (v: T) => void) => (v: T): void => {
          clearTimeout(timer);
          fn(v);
        };
        pending.set(id, { resolve: settle(resolve), reject: settle(reject) });
        child.send({ type: 'command', id, name, arg } satisfies CommandMessage);
      }),
    stop,
  };
}
