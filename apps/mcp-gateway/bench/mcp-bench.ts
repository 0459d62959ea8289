import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/**
 * tools/call through mcp-gateway vs. calling the upstream directly, in one run, each side in its
 * own process: the raw JSON-RPC upstream, the gateway, and autocannon. Loopback only, a few
 * seconds per case. Prints throughput and latency as ratios of direct.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const children: ChildProcess[] = [];

async function startProcess(script: string, args: string[] = []): Promise<Record<string, string | number>> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  return JSON.parse(line) as Record<string, string | number>;
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

try {
  const upstream = await startProcess('bench/raw-upstream.ts');
  const upstreamUrl = `http://127.0.0.1:${upstream.port}/mcp`;
  const gateway = await startProcess('bench/gateway-process.ts', [upstreamUrl]);
  const base = `http://127.0.0.1:${gateway.port}`;
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
}
