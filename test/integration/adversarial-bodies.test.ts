import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_ROUTES, SHAPES, adversarialBody, type BodyRoute, type Shape } from '../support/adversarial-bodies';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { signUpAndSignIn, type SignedInUser } from '../support/cognito-user';

/**
 * A 1 MB adversarial body of each shape, through the real handlers behind the Function
 * URL stand-in, is answered (an OpenAI-shaped 400, or accepted) by one linear scan; while one tenant's
 * request is in flight, another tenant's is answered (CPU per shape is a speed figure: never asserted).
 */
let gw: RunningGateway;
let user: SignedInUser;
let keyA: string;
let keyB: string;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `adversarial-${process.pid}`, cognito: {} });
  user = await signUpAndSignIn(gw);
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const make = async () => (await createKey((await createAccount({ freeTokens: 0, creditNanoUsd: 10_000_000_000 })).accountId, 'adversarial')).key;
  [keyA, keyB] = await Promise.all([make(), make()]);
}, 120_000);

afterAll(async () => {
  await gw?.close();
});

const PATHS: Record<BodyRoute, { method: string; path: string; site: boolean }> = {
  chat: { method: 'POST', path: '/chat/completions', site: false },
  responses: { method: 'POST', path: '/responses', site: false },
  embeddings: { method: 'POST', path: '/embeddings', site: false },
  keys: { method: 'POST', path: '/v1/keys', site: true },
  byok: { method: 'PUT', path: '/v1/byok/openai', site: true },
};

async function send(route: BodyRoute, body: string, key = keyA): Promise<{ status: number; json: any }> {
  const p = PATHS[route];
  const url = p.site ? `${gw.origin}${p.path}` : `${gw.baseUrl}${p.path}`;
  const token = p.site ? user.accessToken : key;
  const res = await fetch(url, { method: p.method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
  return { status: res.status, json: await res.json() };
}

/** What each shape gets: refused by a structural bound, or accepted by the scan (then the route's own answer). */
const REFUSED: ReadonlySet<Shape> = new Set(['long array', 'deep nesting', 'many keys', 'many messages']);

describe('1 MB adversarial bodies', () => {
  for (const route of BODY_ROUTES) {
    it(`${route}: every shape is answered with an OpenAI-shaped error or accepted, refused by a structural bound where it passes one`, async () => {
      for (const shape of SHAPES) {
        const { status, json } = await send(route, adversarialBody(route, shape));
        expect(json.error == null || typeof json.error.message === 'string', `${route} ${shape}`).toBe(true);
        if (REFUSED.has(shape)) {
          expect({ shape, status, code: json.error?.code, type: json.error?.type }).toEqual({
            shape,
            status: 400,
            code: 'request_too_complex',
            type: 'invalid_request_error',
          });
        } else {
          // The long string passes the scan: the route's own answer (schema 400, or served), never request_too_complex or a 5xx.
          expect(status, `${route} ${shape}: ${JSON.stringify(json).slice(0, 300)}`).toBeLessThan(500);
          expect(json.error?.code).not.toBe('request_too_complex');
        }
      }
    }, 120_000);
  }

  it("a second tenant's request is answered while the first tenant's adversarial request is still in flight, and while a burst of refused ones runs", async () => {
    const sim = gw.simulator;
    if (sim === undefined) throw new Error('simulator expected');
    // Tenant A: an accepted 1 MB body (a long string) whose upstream streams one chunk, then stays silent.
    sim.setFault({ model: 'gpt-4o' }, { kind: 'stall-after-chunks', chunks: 1 }, { times: 1 });
    const aborter = new AbortController();
    const big = JSON.parse(adversarialBody('chat', 'long string')) as Record<string, unknown>;
    const a = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...big, stream: true, tools: undefined, messages: [{ role: 'user', content: 'x '.repeat(400_000) }] }),
      signal: aborter.signal,
    });
    expect(a.status).toBe(200);
    const reader = a.body!.getReader();
    const first = await reader.read(); // A is past validation and mid-answer: in flight until we abort it
    expect(first.done).toBe(false);
    try {
      // Meanwhile tenant A keeps sending refused 1 MB bodies; tenant B's request is answered regardless.
      const burst = SHAPES.filter((s) => REFUSED.has(s)).map((s) => send('chat', adversarialBody('chat', s)));
      const b = await send('chat', JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'tenant B' }] }), keyB);
      expect(b.status).toBe(200);
      expect(b.json.choices[0].message.content.length).toBeGreaterThan(0);
      for (const r of await Promise.all(burst)) expect(r.json.error.code).toBe('request_too_complex');
      // A is still open: B did not wait for it.
      let aDone = false;
      // The read rejects once A is aborted below; that rejection is expected, not an error.
      void reader.read().then(
        (r) => (aDone = r.done),
        () => undefined,
      );
      await new Promise((r) => setImmediate(r));
      expect(aDone).toBe(false);
    } finally {
      aborter.abort();
      await reader.cancel().catch(() => undefined);
    }
  }, 120_000);
});
