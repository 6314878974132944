/**
 * The small request/reply protocol between the bench (parent) and its child processes, over Node's
 * IPC channel. A child announces itself once with {@link ReadyMessage}, then answers
 * {@link CommandMessage}s by id.
 */

/** First message of a child: what the parent needs to drive it (URLs, keys). */
export interface ReadyMessage {
  type: 'ready';
  info: unknown;
}

/** A command from the parent. */
export interface CommandMessage {
  type: 'command';
  id: number;
  name: string;
  arg: unknown;
}

/** The child's answer to one command. */
export type ReplyMessage = { type: 'reply'; id: number; ok: true; result: unknown } | { type: 'reply'; id: number; ok: false; error: string };

/** What a child can do on command: name → async handler. */
export type CommandHandlers = Record<string, (arg: unknown) => Promise<unknown>>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Narrows an IPC message from a child. */
export function asChildMessage(value: unknown): ReadyMessage | ReplyMessage | undefined {
  if (!isRecord(value)) return undefined;
  if (value['type'] === 'ready') return { type: 'ready', info: value['info'] };
  if (value['type'] === 'reply' && typeof value['id'] === 'number') {
    return value['ok'] === true
      ? { type: 'reply', id: value['id'], ok: true, result: value['result'] }
      : { type: 'reply', id: value['id'], ok: false, error: String(value['error']) };
  }
  return undefined;
}

/**
 * Child side: answers commands with `handlers`, then tells the parent it is ready with `info`.
 * When the parent goes away (IPC channel closed), `onParentGone` runs (the child should shut down).
 * @throws Error when the process was not started with an IPC channel.
 */
export function serveParent(info: unknown, handlers: CommandHandlers, onParentGone: () => void): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('this process must be started by bench/run.ts (no IPC channel)');
  process.on('message', (raw: unknown) => {
    if (!isRecord(raw) || raw['type'] !== 'command' || typeof raw['id'] !== 'number' || typeof raw['name'] !== 'string') return;
    const id = raw['id'];
    const handler = handlers[raw['name']];
    const run = handler === undefined ? Promise.reject(new Error(`unknown command ${raw['name']}`)) : handler(raw['arg']);
    run.then(
      (result) => send({ type: 'reply', id, ok: true, result } satisfies ReplyMessage),
      (err: unknown) => send({ type: 'reply', id, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies ReplyMessage),
    );
  });
  process.once('disconnect', onParentGone);
  send({ type: 'ready', info } satisfies ReadyMessage);
}
