/**
 * "Where the time goes", short version: the ranked hot-path and cold-start improvements, with this
 * run's evidence filled in (shares of the gateway's busy CPU in the profiled c=16 run unless stated).
 */
import { kb, ms, pct, signedMs } from './format';
import { HOT_PATH_MATCHERS, inclusiveTimes } from './profile-inclusive';
import type { BenchReport } from './report-types';

/** The ranked list. */
export function improvementsSection(r: BenchReport): string {
  const times = inclusiveTimes(r.hotProfile.file, HOT_PATH_MATCHERS);
  const share = (prefix: string): string => pct(times.find((t) => t.label.startsWith(prefix))?.share ?? Number.NaN);
  const row = (label: string) => r.buffered.find((b) => b.label === label);
  const c16 = row('chat c=16');
  const chat1 = row('chat c=1');
  const emb1 = row('embeddings c=1');
  const gatewayCpu = ms(c16?.modelmux.cpuMsPerRequest['gateway'] ?? Number.NaN);
  const dynamoCpu = ms(c16?.modelmux.cpuMsPerRequest['dynamodb'] ?? Number.NaN);
  const embTx = r.storeCalls.find((s) => s.kind === 'embeddings')?.snapshot.operations['TransactWriteItems'];
  const stream = r.streams[0];
  const lambdaStream = r.streams.find((x) => x !== stream && x.concurrency === 1);
  const logLines = (r.storeCalls.find((s) => s.kind === 'buffered chat')?.logLinesPerRequest ?? Number.NaN).toFixed(1);
  const load = r.loadProfile;
  const loadShare = (category: string): string => (load ? pct((load.categories[category] ?? 0) / Math.max(1e-9, load.busyMs)) : 'n/a');
  const catalogue = load?.topOwn.find((h) => h.where.includes('loadCatalogue'));
  const chat = r.bundles.find((b) => b.name === 'Chat');
  const sdkBytes = chat?.packages.filter((p) => p.name.startsWith('@smithy/') || p.name.startsWith('@aws-sdk/')).reduce((a, p) => a + p.bytes, 0) ?? Number.NaN;
  // Fastest runs: the difference of two noisy medians can even come out negative on a busy machine.
  const mapsCost = (r.coldStarts.sourceMaps['Chat']?.importMinMs ?? Number.NaN) - (r.coldStarts.plain['Chat']?.importMinMs ?? Number.NaN);
  return [
    `On this box the billed path is bound by CPU: per chat request at c=16 the gateway burns ${gatewayCpu} ms and DynamoDB Local`,
    `${dynamoCpu} ms (see the CPU table), so DynamoDB Local alone caps the machine far below the targets. In AWS the`,
    'database CPU is not ours; the gateway\'s is (billed duration, and the capacity of each container). Ranked by expected gain:',
    '',
    `1. **The ledger write's SDK cost: ${share('AWS SDK')} of gateway CPU** for one TransactWriteItems per request (inside it: SigV4`,
    `   signing ${share('— SigV4')}, the middleware stack rebuilt per call ${share('— SDK middleware')}, endpoint rules per call`,
    `   ${share('— SDK endpoint')}, input/output log filtering for a no-op logger ${share('— SDK log')}). Cheapest steps:`,
    '   `documentClient().middlewareStack.remove(\'loggerMiddleware\')`, and the plain DynamoDBClient with pre-marshalled',
    '   items instead of the DocumentClient (one marshalling layer and its middleware less). Biggest step: a small',
    '   purpose-built client for the two hot calls (TransactWriteItems, GetItem: JSON POST + SigV4 with a cached signing',
    '   key over the keep-alive agent), which would remove most of this share. Chat already settles after `end()`, so',
    '   this buys CPU (cost, container capacity), not chat latency.',
    `2. **Embeddings wait for the ledger**: BUFFERED mode sends nothing until the handler returns, so the settle`,
    `   (TransactWriteItems, ${ms(embTx ? embTx.totalMs / Math.max(1, embTx.calls) : Number.NaN)} ms avg here, single-digit ms on DynamoDB) is on every`,
    `   embeddings response: added p50 embeddings c=1 ${signedMs(emb1?.addedP50 ?? Number.NaN)} ms vs chat c=1 ${signedMs(chat1?.addedP50 ?? Number.NaN)} ms. Serving`,
    '   embeddings from the RESPONSE_STREAM function (write the JSON, `end()`, then settle, as chat does) takes it off.',
    `3. **Request logging**: Powertools takes ${share('Powertools')} of gateway CPU for ${logLines} JSON line(s) per request. Keep it`,
    '   at one line per request (settle fields folded into it); beyond that the lever is fewer attributes per line.',
    `4. **zod on the hot path**: ${share('zod')} (strict request schema, upstream response schema). The tolerant upstream`,
    '   schemas could be replaced by a hand-written narrow check of the few fields read.',
    `5. **GC**: ${share('Garbage')}; per-request object churn (header spreads, SDK context copies) is the lever.`,
    `6. **Streaming TTFB**: modelmux sends headers with the first content chunk (fallback stays possible until then), so`,
    `   its first byte comes ${signedMs(stream?.addedFirstByteP50 ?? Number.NaN)} ms after direct here (the simulator sends the role chunk`,
    `   ${ms(r.streams[0]?.direct.firstToken.p50 ?? Number.NaN)} ms before the first token). TTFT, what users feel, is ${signedMs(stream?.addedFirstTokenP50 ?? Number.NaN)} ms p50`,
    `   (${signedMs(lambdaStream?.addedFirstTokenP50 ?? Number.NaN)} ms one invocation at a time). Holding headers is a design choice, not a bug.`,
    `7. **Local only**: the Function URL stand-in takes ${share('Function URL')} (event building, X-Ray-style trace id per request,`,
    '   prelude parsing); it inflates local numbers, not Lambda\'s. The balance cache has no single-flight: when an entry',
    '   expires, every request in flight in the process reads the account (Lambda runs one request per container, so',
    '   there it is one read per container per 5 s).',
    '',
    `**Cold start** (load profile of the Chat bundle): V8 parse + compile ${loadShare('V8 parse + compile of module source')}, zod ${loadShare('zod')}`,
    `(schema construction + \`loadCatalogue\` validating the static catalogue${catalogue ? `: ${pct(catalogue.share)}` : ''}), Node built-ins ${loadShare('Node built-in modules (load)')}.`,
    `1. Smaller bundle: the AWS SDK is ${kb(sdkBytes)} of index.mjs; \`@aws-sdk/nested-clients\` (SSO/STS/login for the`,
    '   default credential chain) is never used in Lambda, where credentials come from env: alias',
    '   `@aws-sdk/credential-provider-node` to a `fromEnv()` stub in the esbuild options; load the Secrets Manager client',
    '   with `import()` on first use.',
    '2. Validate the catalogue in a unit test (it is static data) instead of with zod at every INIT.',
    `3. \`--enable-source-maps\` costs ${signedMs(mapsCost)} ms per cold start here (fastest runs compared; Node reads and parses the`,
    `   ${kb(chat?.mapBytes ?? Number.NaN)} index.mjs.map at load): a trade for readable stack traces, worth making consciously.`,
  ].join('\n');
}
