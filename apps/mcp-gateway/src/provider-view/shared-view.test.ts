import { ManualClock, MemoryEventBus, silentLogger } from '@agentgw/core';
import type { McpUpstreamClient } from '@agentgw/mcp-client';
import { describe, expect, it } from 'vitest';
import { providerOf } from '../tool-call/tool-call.fixtures.js';
import { ProviderLists } from './provider-lists.js';
import { lacksUserAuth, sharedTargetOf, sharedToolList } from './shared-view.js';

const shared = { ...providerOf('docs', '*'), authType: 'bearer' as const };
const perUser = { ...providerOf('crm', '*'), authType: 'user_oauth' as const, credentialServiceType: 'crm' };
const exchanged = { ...providerOf('hr', '*'), authType: 'token_exchange' as const };

/** The one list cache over an upstream that lists `read_file`, counting fetches. */
function listsUnderTest() {
  const fetched = { count: 0 };
  const client = {
    async listAll() {
      fetched.count += 1;
      return { items: [{ name: 'read_file' }], session: { sessionId: null, protocolVersion: '2025-06-18' } };
    },
  } as unknown as McpUpstreamClient;
  const lists = new ProviderLists(
    { client, clock: new ManualClock(), bus: new MemoryEventBus(), logger: silentLogger() },
    1_000,
  );
  return { lists, fetched };
}

describe('the provider as no particular caller sees it', () => {
  it('has a shared target for a shared-auth provider, reading its secret', () => {
    const target = sharedTargetOf(shared, () => 's3cret');
    expect(target?.endpoint).toBe(shared.endpoint);
    expect(target?.headers).toEqual({ authorization: 'Bearer s3cret' });
  });

  it('has no shared target for a per-user or token-exchange provider, and never reads a secret for it', () => {
    const secret = () => {
      throw new Error('a per-user provider has no shared secret to read');
    };
    expect(sharedTargetOf(perUser, secret)).toBeNull();
    expect(sharedTargetOf(exchanged, secret)).toBeNull();
  });

  it('lists a shared provider from the one cache and a per-user provider not at all', async () => {
    const { lists, fetched } = listsUnderTest();
    const deps = { lists, authSecret: () => null };
    expect(sharedToolList(deps, perUser)).toBeNull();
    expect(fetched.count).toBe(0);
    expect((await sharedToolList(deps, shared))?.items).toEqual([{ name: 'read_file' }]);
    await sharedToolList(deps, shared);
    expect(fetched.count).toBe(1);
  });

  it('refuses a call to a per-user provider without the user auth, never a shared one', () => {
    expect(lacksUserAuth(perUser, false)).toBe(true);
    expect(lacksUserAuth(perUser, true)).toBe(false);
    expect(lacksUserAuth(exchanged, false)).toBe(true);
    expect(lacksUserAuth(shared, false)).toBe(false);
  });
});
