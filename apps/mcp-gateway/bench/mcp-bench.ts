import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * tools/call through mcp-gateway vs. calling the upstream directly, in one run, each side in its
 * own process: the raw JSON-RPC upstream, the all-in-one gateway started as the README starts it
 * (`gateway start`, embedded database, in-process adapters, in a scratch directory) and
 * autocannon. Loopback only, a few seconds per case. Prints throughput and latency as ratios of direct.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const children: ChildProcess[] = [];

async function startUpstream(): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/raw-upstream.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return (JSON.parse(line) as { port: number }).port;
}

const GATEWAY_BIN = fileURLToPath(new URL('../../gateway/bin/gateway.mjs', import.meta.url));
const ADMIN = { email: 'bench-admin@example.com', password: 'bench-admin-password' };

/** `gateway start` in a scratch directory (first boot: generated secrets, the admin from ADMIN_EMAIL/ADMIN_PASSWORD). */
async function startGateway(dir: string): Promise<string> {
  const port = 17_000 + Math.floor(Math.random() * 20_000);
  // BENCH_PROFILE_DIR=<dir>: the gateway writes a CPU profile there when it stops.
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const child = spawn(process.execPath, [...profile, GATEWAY_BIN, 'start', '--port', String(port)], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, LOG_LEVEL: 'warn', EGRESS_POLICY: 'allow-private', ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while ((await fetch(`${base}/health`).catch(() => null))?.status !== 200) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('the gateway did not start');
    await new Promise((r) => setTimeout(r, 250));
  }
  return base;
}

/** One provider (the raw upstream), one agent and an allow rule, through the admin API. */
async function seed(base: string, upstreamUrl: string): Promise<{ token: string; providerId: string }> {
  const login = (await (await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).json()) as { token: string };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${login.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const provider = (await post('/admin/tool-providers', { name: 'raw', pattern: '*', endpoint: upstreamUrl })).provider as { id: string };
  const agent = await post('/admin/agents', { name: 'bench', upstreamUrl: 'http://127.0.0.1:9/agent' });
  await post('/admin/provider-access', { subjectType: 'agent', subjectId: (agent.agent as { id: string }).id, providerId: '*', action: 'allow' });
  return { token: agent.runtime_token as string, providerId: provider.id };
}

async function load(url: string, connections: number, headers: Record<string, string>, body: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/load.ts', url, String(connections), String(SECONDS), JSON.stringify(headers), body], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  await once(child, 'exit');
  return JSON.parse(line) as { rps: number; p50: number; p99: number; mean: number; errors: number; non2xx: number; total: number };
}

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { x: 1 }, _meta: META } });
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };

const scratch = mkdtempSync(join(tmpdir(), 'agentgw-bench-'));
try {
  const upstreamUrl = `http://127.0.0.1:${await startUpstream()}/mcp`;
  const base = await startGateway(scratch);
  const gateway = await seed(base, upstreamUrl);
  const auth = { ...mcpHeaders, authorization: `Bearer ${gateway.token}` };
  const cases = [
    { name: 'direct', url: upstreamUrl, headers: mcpHeaders },
    { name: 'proxy', url: `${base}/api/v1/mcp-proxy/${gateway.providerId}/mcp`, headers: auth },
    { name: 'unified', url: `${base}/api/v1/mcp/mcp`, headers: auth },
  ];
  // Warm-up: negotiation, caches and JIT, not measured.
  for (const c of cases) await fetch(c.url, { method: 'POST', headers: c.headers, body }).then((r) => r.text());
  for (const connections of [1, CONNECTIONS]) {
    const results: Record<string, Awaited<ReturnType<typeof load>>> = {};
    for (const c of cases) results[c.name] = await load(c.url, connections, c.headers, body);
    const direct = results.direct!;
    console.log(`\ntools/call, ${connections} connection(s), ${SECONDS}s per case`);
    console.log('case      req/s     p50 ms  p99 ms  mean ms  errors  non-2xx  × direct req/s  added p50 ms');
    for (const [name, r] of Object.entries(results)) {
      console.log(
        `${name.padEnd(8)} ${r.rps.toFixed(0).padStart(7)}  ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)} ${r.mean.toFixed(2).padStart(8)} ${String(r.errors).padStart(7)} ${String(r.non2xx).padStart(8)}  ${(r.rps / direct.rps).toFixed(2).padStart(13)}  ${(r.p50 - direct.p50).toFixed(2).padStart(12)}`,
      );
    }
  }
} finally {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode !== null ? null : once(c, 'exit'))));
  rmSync(scratch, { recursive: true, force: true });
}
