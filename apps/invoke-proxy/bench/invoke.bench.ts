/**
 * Invoke through the gateway vs. the same loopback upstream called directly: requests/s, p50,
 * p99 and the gateway's overhead as a ratio. Bounded in count and time:
 *   BENCH_REQUESTS (default 3000 per target), BENCH_SECONDS (default 15 per target),
 *   BENCH_CONCURRENCY (default 16), BENCH_CREDENTIALS (default 1; 0 = the agent requires none).
 * Runs on the embedded database with one required credential, so each call does the whole
 * pipeline: auth, agent (cached), vault resolve, session token, forward, wrap.
 */
import { secretBoxFor, generateRuntimeToken } from '@agentgw/auth';
import { newId } from '@agentgw/core';
import { json } from '@agentgw/db';
import { serve } from '@agentgw/service-kit';
import { createTestDeps, testHost } from '@agentgw/service-kit/testing';
import { createUser, tokenFor } from '@agentgw/testkit';
import { createVault, directCredentialResolver } from '@agentgw/credentials';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { createInvokeProxyService } from '../src/index.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const WITH_CREDENTIAL = process.env.BENCH_CREDENTIALS !== '0';
const WARMUP = 200;

interface Result {
  count: number;
  failures: number;
  seconds: number;
  p50: number;
  p99: number;
}

async function run(url: string, headers: Record<string, string>, body: string, limit: number): Promise<Result> {
  const dispatcher = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 10_000 });
  const latencies: number[] = [];
  let issued = 0;
  let failures = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  const worker = async () => {
    while (issued < limit && performance.now() < deadline) {
      issued += 1;
      const t0 = performance.now();
      const res = await request(url, { method: 'POST', headers, body, dispatcher });
      await res.body.text();
      if (res.statusCode !== 200) failures += 1;
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  await dispatcher.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { count: latencies.length, failures, seconds, p50: at(0.5), p99: at(0.99) };
}

const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"reply":"ok"}'));
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/run`;

const deps = await createTestDeps({ backend: 'pglite' });
const vault = createVault(deps);
const user = await createUser(deps, { email: 'bench@example.com', roles: ['agent_creator'], tenantId: 'bench' });
await vault.store({
  userId: user.id,
  tenantId: 'bench',
  serviceType: 'github',
  kind: 'api_key',
  secret: 'gh-bench',
  expiresAt: null,
});
const agentId = newId();
const runtime = generateRuntimeToken();
await deps.db
  .insertInto('agents')
  .values({
    id: agentId,
    name: 'bench',
    upstream_url: upstreamUrl,
    upstream_secret_enc: secretBoxFor(deps.config).seal('bench-secret', agentId),
    required_credentials: json(WITH_CREDENTIAL ? [{ serviceType: 'github' }] : []),
    tenant_id: 'bench',
    runtime_token_hash: runtime.hash,
    runtime_token_prefix: runtime.prefix,
  })
  .execute();
const { app } = await testHost(createInvokeProxyService({ credentials: () => directCredentialResolver(vault) }), deps);
const gateway = await serve(app, {
  port: 0,
  hostname: '127.0.0.1',
  deps: { close: async () => {} },
  logger: deps.logger,
  handleSignals: false,
});

const body = JSON.stringify({ message: 'benchmark', context: { n: 1 } });
const headers = { 'content-type': 'application/json', authorization: `Bearer ${await tokenFor(deps, user)}` };
const gatewayUrl = `http://127.0.0.1:${gateway.port}/api/v1/agents/${agentId}/invoke`;

await run(upstreamUrl, headers, body, WARMUP);
await run(gatewayUrl, headers, body, WARMUP);
const direct = await run(upstreamUrl, headers, body, REQUESTS);
const viaGateway = await run(gatewayUrl, headers, body, REQUESTS);

const line = (name: string, r: Result) =>
  `${name.padEnd(8)} ${String(r.count).padStart(6)} req in ${r.seconds.toFixed(2)}s  ` +
  `${(r.count / r.seconds).toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms` +
  (r.failures ? `  (${r.failures} non-200)` : '');
console.log(
  `invoke benchmark: concurrency ${CONCURRENCY}, up to ${REQUESTS} requests or ${SECONDS}s per target, ` +
    `${WITH_CREDENTIAL ? 'one required credential' : 'no required credential'}`,
);
console.log(line('direct', direct));
console.log(line('gateway', viaGateway));
console.log(
  `ratio    throughput ${(viaGateway.count / viaGateway.seconds / (direct.count / direct.seconds)).toFixed(2)}x of direct, ` +
    `p50 ${(viaGateway.p50 / direct.p50).toFixed(2)}x, p99 ${(viaGateway.p99 / direct.p99).toFixed(2)}x`,
);

await gateway.shutdown();
await deps.close();
upstream.closeAllConnections();
await new Promise((resolve) => upstream.close(resolve));
