import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import { describe, expect, it } from 'vitest';
import type { ProviderLists } from '../provider-view/provider-lists.js';
import { providerOf, spyLogger } from '../tool-call/tool-call.fixtures.js';
import { recheckPinsOnUpstreamChange } from './pin-recheck.js';
import type { ToolPins } from './tool-pins.js';

/** The re-check wired to fakes: which providers' shared lists it asked for and applied pins to. */
function recheckOf(providers: ProviderRecord[]) {
  let changed: (providerId: string) => void = () => undefined;
  const listed: string[] = [];
  const applied: string[] = [];
  const lists = {
    onUpstreamToolsChanged: (listener: (providerId: string) => void) => ((changed = listener), () => undefined),
    get: async (provider: ProviderRecord) => (
      listed.push(provider.id),
      { items: [{ name: 'a' }], failure: null, refusal: null }
    ),
  } as unknown as ProviderLists;
  const pins = {
    enabledFor: async () => true,
    apply: async (provider: ProviderRecord) => void applied.push(provider.id),
  } as unknown as ToolPins;
  const catalog = {
    providers: { get: async (id: string) => providers.find((p) => p.id === id) ?? null, authSecret: () => null },
  } as unknown as Catalog;
  recheckPinsOnUpstreamChange({ lists, pins, catalog, logger: spyLogger() });
  return { changed: (id: string) => changed(id), listed, applied };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('recheckPinsOnUpstreamChange', () => {
  it('lists a shared-auth provider again and applies its pins when its upstream says its tools changed', async () => {
    const { changed, listed, applied } = recheckOf([{ ...providerOf('shared', '*'), authType: 'bearer' }]);
    changed('shared');
    await settle();
    expect(listed).toEqual(['shared']);
    expect(applied).toEqual(['shared']);
  });

  it('never asks a per-user provider for a shared list (it would go with no user auth): its users are re-checked as they list', async () => {
    const perUser = (id: string, authType: ProviderRecord['authType']) => ({
      ...providerOf(id, '*'),
      authType,
      credentialServiceType: 'svc',
    });
    const { changed, listed, applied } = recheckOf([
      perUser('oauth', 'user_oauth'),
      perUser('key', 'user_key'),
      perUser('mcp', 'mcp_oauth'),
      perUser('exchange', 'token_exchange'),
    ]);
    for (const id of ['oauth', 'key', 'mcp', 'exchange']) changed(id);
    await settle();
    expect(listed).toEqual([]);
    expect(applied).toEqual([]);
  });
});
