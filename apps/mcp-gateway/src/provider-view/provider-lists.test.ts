import type { ProviderRecord } from '@agentgw/catalog';
import { ManualClock, MemoryEventBus, silentLogger } from '@agentgw/core';
import type { McpUpstreamClient, UpstreamTarget } from '@agentgw/mcp-client';
import { describe, expect, it } from 'vitest';
import { ProviderLists, sharedLister } from './provider-lists.js';

/** An upstream client whose tools/list answers with `tools.names` (or fails), counting fetches. */
function fakeClient(tools: { names: string[] | null; fetches: number }): McpUpstreamClient {
  return {
    async listAll() {
      tools.fetches += 1;
      if (tools.names === null) throw new Error('listing is broken');
      return {
        items: tools.names.map((name) => ({ name })),
        session: { sessionId: null, protocolVersion: '2025-06-18' },
      };
    },
  } as unknown as McpUpstreamClient;
}

const provider = { id: 'p1' } as ProviderRecord;
const lister = sharedLister({} as UpstreamTarget);

function setUp(names: string[] | null) {
  const tools = { names, fetches: 0 };
  const clock = new ManualClock();
  const lists = new ProviderLists(
    { client: fakeClient(tools), clock, bus: new MemoryEventBus(), logger: silentLogger() },
    1_000,
  );
  return { tools, clock, lists };
}

describe('ProviderLists.listed (the per-call check)', () => {
  it('fetches once when there is no list, then answers from it', async () => {
    const { tools, lists } = setUp(['read_file']);
    expect(await lists.listed(provider, lister, 'read_file')).toEqual({ kind: 'listed' });
    expect(await lists.listed(provider, lister, 'read_file')).toEqual({ kind: 'listed' });
    expect(await lists.listed(provider, lister, 'Read_File')).toEqual({ kind: 'unlisted' });
    expect(tools.fetches).toBe(1);
  });

  it('answers a known name from a list past its TTL and refreshes it behind the call', async () => {
    const { tools, clock, lists } = setUp(['read_file']);
    await lists.listed(provider, lister, 'read_file');
    clock.advance(61_000);
    tools.names = ['write_file'];
    expect(await lists.listed(provider, lister, 'read_file')).toEqual({ kind: 'listed' });
    await expect.poll(() => tools.fetches).toBe(2);
    expect(await lists.listed(provider, lister, 'read_file')).toEqual({ kind: 'unlisted' });
  });

  it('fetches again for a missing name only once the list is 5 s old (a tool added upstream shows up)', async () => {
    const { tools, clock, lists } = setUp(['read_file']);
    await lists.listed(provider, lister, 'read_file');
    tools.names = ['read_file', 'new_tool'];
    expect(await lists.listed(provider, lister, 'new_tool')).toEqual({ kind: 'unlisted' });
    expect(tools.fetches).toBe(1);
    clock.advance(5_000);
    expect(await lists.listed(provider, lister, 'new_tool')).toEqual({ kind: 'listed' });
    expect(tools.fetches).toBe(2);
  });

  it('reports an unavailable list, and retries it only after the failure TTL', async () => {
    const { tools, clock, lists } = setUp(null);
    expect(await lists.listed(provider, lister, 'read_file')).toMatchObject({
      kind: 'unavailable',
      failure: 'listing is broken',
    });
    expect(await lists.listed(provider, lister, 'read_file')).toMatchObject({ kind: 'unavailable' });
    expect(tools.fetches).toBe(1);
    tools.names = ['read_file'];
    clock.advance(5_000);
    expect(await lists.listed(provider, lister, 'read_file')).toEqual({ kind: 'listed' });
  });
});
