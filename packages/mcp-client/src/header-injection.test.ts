import { startMcpServer } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpUpstreamError } from './errors.js';
import { McpUpstreamClient } from './upstream-client.js';

describe('header values carrying CR/LF', () => {
  let fixture: Awaited<ReturnType<typeof startMcpServer>>;
  const client = new McpUpstreamClient();
  beforeAll(async () => {
    fixture = await startMcpServer({ name: 'h', tools: [{ name: 'echo', handler: () => 'ok' }] });
  });
  afterAll(async () => {
    await client.destroy();
    await fixture.close();
  });

  it('never reach the upstream as an extra header: the call fails as an McpUpstreamError (undici refuses the value)', async () => {
    const target = {
      endpoint: fixture.url,
      key: 'k',
      headers: { 'x-end-user-email': 'eve@example.com\r\nX-Injected: 1' },
    };
    const before = fixture.requests.length;
    const err = await client.request(target, 'tools/call', { name: 'echo', arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUpstreamError);
    expect(fixture.requests.slice(before).some((r) => 'x-injected' in r.headers)).toBe(false);
  });
});
