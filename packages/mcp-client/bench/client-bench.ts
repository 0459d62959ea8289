import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMcpServer } from '@agentgw/testkit';
import { McpUpstreamClient } from '../src/upstream-client.js';

/**
 * Why the hot path is not the SDK's Client: sequential tools/call against a real 1.x SDK server
 * (loopback) with (a) an SDK Client per call, as a stateless gateway replica would need without
 * storable sessions, (b) one long-lived SDK Client (one in-memory session, pinned to a process),
 * (c) McpUpstreamClient (session as a value, undici keep-alive pool).
 */
const CALLS = Number(process.env.BENCH_CALLS ?? 300);
const fixture = await startMcpServer({ tools: [{ name: 'echo', handler: () => 'ok' }] });
const url = new URL(fixture.url);

async function time(label: string, calls: number, run: () => Promise<void>) {
  const started = performance.now();
  for (let i = 0; i < calls; i++) await run();
  const ms = (performance.now() - started) / calls;
  console.log(`${label.padEnd(44)} ${ms.toFixed(3)} ms/call  ${(1000 / ms).toFixed(0)} calls/s`);
}

await time('SDK Client per call (connect + call + close)', Math.ceil(CALLS / 5), async () => {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(url));
  await client.callTool({ name: 'echo', arguments: {} });
  await client.close();
});

const longLived = new Client({ name: 'bench', version: '1' });
await longLived.connect(new StreamableHTTPClientTransport(url));
await time('one long-lived SDK Client', CALLS, async () => {
  await longLived.callTool({ name: 'echo', arguments: {} });
});
await longLived.close();

const lean = new McpUpstreamClient();
const target = { endpoint: fixture.url };
await time('McpUpstreamClient (shared session)', CALLS, async () => {
  await lean.request(target, 'tools/call', { name: 'echo', arguments: {} });
});
const { session } = await lean.request(target, 'ping', {});
await time('McpUpstreamClient (session passed as a value)', CALLS, async () => {
  await lean.request(target, 'tools/call', { name: 'echo', arguments: {} }, { session });
});
await lean.destroy();
await fixture.close();
