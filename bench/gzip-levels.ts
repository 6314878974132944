/**
 * What gzip costs and saves on a real 500-chunk stream (the events the gateway sent in the run), per zlib
 * setting, written as the gateway writes them (functions/shared/edge/stream-writer.ts): one gzip member,
 * a Z_SYNC_FLUSH after every event, each event's output awaited before the next is written.
 */
import { once } from 'node:events';
import { constants, createGzip, gunzipSync, type ZlibOptions } from 'node:zlib';
import { GZIP_LEVEL } from '../functions/shared/edge/response-encoding';
import { num, table } from './report-details';

/** One zlib setting: body bytes of the whole stream, and CPU per event (this process, zlib's thread included). */
export interface GzipRow {
  setting: string;
  bytes: number;
  cpuUsPerEvent: number;
}

const SETTINGS: Array<[string, ZlibOptions | undefined]> = [
  ['identity (a pass-through stream)', undefined],
  ['level 1', { level: 1 }],
  ['level 1, windowBits 12', { level: 1, windowBits: 12 }],
  ['level 6 (zlib default)', { level: 6 }],
  ['level 6, memLevel 9', { level: 6, memLevel: 9 }],
  ['level 9', { level: 9 }],
];

async function writeAll(events: string[], opts: ZlibOptions | undefined): Promise<Buffer> {
  const { PassThrough } = await import('node:stream');
  const z = opts === undefined ? new PassThrough() : createGzip({ ...opts, flush: constants.Z_SYNC_FLUSH });
  const out: Buffer[] = [];
  z.on('data', (b: Buffer) => out.push(b));
  for (const e of events) {
    const flushed = once(z, 'data');
    z.write(e);
    await flushed;
  }
  const ended = once(z, 'end');
  z.end();
  await ended;
  return Buffer.concat(out);
}

/**
 * Measures every setting on `events`: `runs` streams each, the settings interleaved (one stream of each
 * per round, so a load change on the machine hits them alike), after one unmeasured stream each.
 * @throws Error if a gzip does not decode to the events.
 */
export async function measureGzipLevels(events: string[], runs: number): Promise<GzipRow[]> {
  const rows: GzipRow[] = [];
  for (const [setting, opts] of SETTINGS) {
    const body = await writeAll(events, opts);
    if (opts !== undefined && gunzipSync(body).toString('utf8') !== events.join('')) throw new Error(`gzip ${setting} does not round-trip`);
    rows.push({ setting, bytes: body.length, cpuUsPerEvent: 0 });
  }
  for (let i = 0; i < runs; i++) {
    for (const [at, [, opts]] of SETTINGS.entries()) {
      const before = process.cpuUsage();
      await writeAll(events, opts);
      const cpu = process.cpuUsage(before);
      (rows[at] as GzipRow).cpuUsPerEvent += (cpu.user + cpu.system) / runs / events.length;
    }
  }
  return rows;
}

/** The section of BENCHMARKS.md. */
export function renderGzipLevels(rows: GzipRow[], events: number): string {
  const identity = rows[0]?.bytes ?? 1;
  return [
    `## gzip of a 500-chunk stream`,
    '',
    `The ${events} events of one 500-chunk stream of this run, written through gzip with a sync flush after each (as the gateway does for`,
    `a client that accepts gzip), measured in the bench process. The gateway uses level ${GZIP_LEVEL} (functions/shared/edge/response-encoding.ts).`,
    '',
    table(
      ['setting', 'body bytes', 'of identity', 'CPU µs per event', 'over identity'],
      rows.map((r) => [r.setting, num(r.bytes, 0), `${num((100 * r.bytes) / identity, 1)}%`, num(r.cpuUsPerEvent, 1), num(r.cpuUsPerEvent - (rows[0]?.cpuUsPerEvent ?? 0), 1)]),
    ),
  ].join('\n');
}
