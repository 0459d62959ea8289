import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressRefusedError } from '../errors.js';
import { createEgressDispatcher, egressFetch, egressRefusalOf, type EgressResolver } from './dispatcher.js';
import { egressPolicyFromConfig } from './policy.js';

let server: Server;
let port: number;
let hits: string[];

beforeAll(async () => {
  hits = [];
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    if (req.url === '/redirect') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('secret-from-loopback');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** A resolver answering from a script: each call takes the next answer (the last one repeats). */
function scriptedResolver(...answers: string[][]): EgressResolver & { calls: number } {
  const resolver = Object.assign(
    async () => {
      const answer = answers[Math.min(resolver.calls++, answers.length - 1)]!;
      return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
    { calls: 0 },
  );
  return resolver;
}

async function refusalOf(promise: Promise<unknown>): Promise<EgressRefusedError | undefined> {
  try {
    await promise;
  } catch (err) {
    return egressRefusalOf(err);
  }
  throw new Error('the request was not refused');
}

describe('egress dispatcher (real sockets on 127.0.0.1)', () => {
  it('allow-private connects to loopback through its own lookup', async () => {
    const resolve = scriptedResolver(['127.0.0.1']);
    const dispatcher = createEgressDispatcher(egressPolicyFromConfig({ EGRESS_POLICY: 'allow-private' }), { resolve });
    const res = await request(`http://upstream.test:${port}/ok`, { dispatcher });
    expect(await res.body.text()).toBe('secret-from-loopback');
    expect(resolve.calls).toBe(1);
    await dispatcher.close();
  });

  it('public-only refuses a literal loopback address before connecting', async () => {
    hits.length = 0;
    const dispatcher = createEgressDispatcher(egressPolicyFromConfig({ EGRESS_POLICY: 'public-only' }));
    const refused = await refusalOf(request(`http://127.0.0.1:${port}/literal`, { dispatcher }));
    expect(refused?.reason).toBe('private-address');
    expect(refused?.status).toBe(403);
    expect(hits).toEqual([]);
    await dispatcher.close();
  });

  it('public-only refuses a loopback address reached by IPv4-mapped IPv6 from the resolver', async () => {
    hits.length = 0;
    const resolve = scriptedResolver(['::ffff:127.0.0.1']);
    const dispatcher = createEgressDispatcher(egressPolicyFromConfig({ EGRESS_POLICY: 'public-only' }), { resolve });
    expect((await refusalOf(request(`http://mapped.test:${port}/`, { dispatcher })))?.reason).toBe('private-address');
    expect(hits).toEqual([]);
    await dispatcher.close();
  });

  it('DNS rebinding: public when checked first, loopback or metadata at connect time, is refused at connect', async () => {
    hits.length = 0;
    const policy = egressPolicyFromConfig({ EGRESS_POLICY: 'public-only' });
    const resolve = scriptedResolver(['93.184.216.34'], ['127.0.0.1']);
    // The first resolution (what a write-time or pre-flight check would have seen) is public.
    expect(await resolve('rebind.test')).toEqual([{ address: '93.184.216.34', family: 4 }]);
    const dispatcher = createEgressDispatcher(policy, { resolve });
    expect((await refusalOf(request(`http://rebind.test:${port}/`, { dispatcher })))?.reason).toBe('private-address');
    expect(hits).toEqual([]);
    await dispatcher.close();

    // Under allow-private the metadata address is still refused.
    const toMetadata = scriptedResolver(['93.184.216.34'], ['169.254.169.254']);
    await toMetadata('rebind.test');
    const lenient = createEgressDispatcher(egressPolicyFromConfig({ EGRESS_POLICY: 'allow-private' }), {
      resolve: toMetadata,
    });
    expect((await refusalOf(request(`http://rebind.test:${port}/`, { dispatcher: lenient })))?.reason).toBe('metadata');
    await lenient.close();
  });

  it('checks every resolved address, not just the first', async () => {
    const resolve = scriptedResolver(['8.8.8.8', '127.0.0.1']);
    const dispatcher = createEgressDispatcher(egressPolicyFromConfig({ EGRESS_POLICY: 'public-only' }), { resolve });
    expect((await refusalOf(request(`http://mixed.test:${port}/`, { dispatcher })))?.reason).toBe('private-address');
    await dispatcher.close();
  });

  it('refuses metadata host names before resolving them', async () => {
    const resolve = scriptedResolver(['127.0.0.1']);
    const dispatcher = createEgressDispatcher(egressPolicyFromConfig({ EGRESS_POLICY: 'allow-private' }), { resolve });
    expect((await refusalOf(request(`http://metadata.google.internal:${port}/`, { dispatcher })))?.reason).toBe(
      'metadata',
    );
    expect(resolve.calls).toBe(0);
    await dispatcher.close();
  });

  it('EGRESS_ALLOW lets an operator-listed private host through under public-only', async () => {
    const resolve = scriptedResolver(['127.0.0.1']);
    const policy = egressPolicyFromConfig({ EGRESS_POLICY: 'public-only', EGRESS_ALLOW: ['vault.internal'] });
    const dispatcher = createEgressDispatcher(policy, { resolve });
    const res = await request(`http://vault.internal:${port}/`, { dispatcher });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect((await refusalOf(request(`http://other.internal:${port}/`, { dispatcher })))?.reason).toBe(
      'private-address',
    );
    await dispatcher.close();
  });

  it('egressFetch does not follow a redirect (to metadata) and throws the refusal itself', async () => {
    hits.length = 0;
    const dispatcher = createEgressDispatcher(egressPolicyFromConfig({ EGRESS_POLICY: 'allow-private' }));
    const fetchVia = egressFetch(dispatcher);
    const res = await fetchVia(`http://127.0.0.1:${port}/redirect`);
    expect(res.status).toBe(302);
    expect(hits).toEqual(['GET /redirect']);
    await expect(fetchVia('http://169.254.169.254/latest/meta-data/')).rejects.toBeInstanceOf(EgressRefusedError);
    await dispatcher.close();
  });
});
