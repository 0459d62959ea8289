import { MemoryEventBus } from '@agentgw/core';
import { describe, expect, it } from 'vitest';
import { spyLogger } from '../tool-call/tool-call.fixtures.js';
import type { NamingProvider, OfferedTool, ToolNameAssignment } from './exposed-name-rule.js';
import { ExposedNames, MAX_NAMES_PER_PROVIDER } from './exposed-names.js';
import type { ToolNameStore } from './tool-name-store.js';

/** The table's contract in memory: the first name of a tool, and of an exposed name, stands; counts the reads. */
class MemoryToolNameStore implements ToolNameStore {
  readonly rows = new Map<string, ToolNameAssignment[]>();
  loads = 0;

  async load(scope: string): Promise<ToolNameAssignment[]> {
    this.loads++;
    return [...(this.rows.get(scope) ?? [])];
  }

  async add(scope: string, names: readonly ToolNameAssignment[]): Promise<void> {
    const rows = this.rows.get(scope) ?? [];
    for (const n of names) {
      if (
        rows.some(
          (r) =>
            r.exposedName === n.exposedName || (r.providerId === n.providerId && r.upstreamName === n.upstreamName),
        )
      )
        continue;
      rows.push(n);
    }
    this.rows.set(scope, rows);
  }
}

const provider = (id: string): NamingProvider => ({ id, name: id, namePrefix: null });
const offer = (p: NamingProvider, ...names: string[]): OfferedTool[] =>
  names.map((upstreamName) => ({ provider: p, upstreamName }));
const [a, b, c] = [provider('a'), provider('b'), provider('c')];

async function replica(store: ToolNameStore, bus = new MemoryEventBus()): Promise<ExposedNames> {
  const names = new ExposedNames({ store, bus, logger: spyLogger() });
  await names.start();
  return names;
}

describe('ExposedNames', () => {
  it('names once and keeps the names: one store read while nothing new is offered', async () => {
    const store = new MemoryToolNameStore();
    const names = await replica(store);
    const first = await names.name('t1', [...offer(a, 'search'), ...offer(b, 'search')]);
    expect([...first.byExposed.keys()]).toEqual(['search', 'b__search']);
    const reads = store.loads;
    await names.name('t1', [...offer(b, 'search'), ...offer(a, 'search')]);
    expect(store.loads).toBe(reads);
  });

  it('keeps scopes apart: the same tool may have another name in another tenant', async () => {
    const names = await replica(new MemoryToolNameStore());
    await names.name('t1', offer(a, 'search'));
    await names.name('t2', offer(b, 'search'));
    expect((await names.name('t2', [...offer(a, 'search'), ...offer(b, 'search')])).byTool.get('a\nsearch')).toBe(
      'a__search',
    );
    expect((await names.cached('t1')).byTool.get('a\nsearch')).toBe('search');
  });

  it('agrees across replicas: a tool another replica named is read before a name is chosen, and its name stands', async () => {
    const store = new MemoryToolNameStore();
    const [one, two] = [await replica(store), await replica(store)];
    await two.name('t1', []);
    await one.name('t1', offer(b, 'search'));
    // Replica two's cache predates b's name; offering a and b together must not give a the bare name.
    const seen = await two.name('t1', [...offer(a, 'search'), ...offer(b, 'search')]);
    expect(seen.byTool.get('b\nsearch')).toBe('search');
    expect(seen.byTool.get('a\nsearch')).toBe('a__search');
  });

  it('chooses again when another replica took the chosen name meanwhile', async () => {
    const store = new MemoryToolNameStore();
    const names = await replica(store);
    const racing: ToolNameStore = {
      load: (scope) => store.load(scope),
      add: async (scope, chosen) => {
        // Another replica names c's `search` first, between this replica's read and its write.
        if (!store.rows.get(scope)?.length)
          await store.add(scope, [{ providerId: 'c', upstreamName: 'search', exposedName: 'search' }]);
        await store.add(scope, chosen);
      },
    };
    const raced = new ExposedNames({ store: racing, bus: new MemoryEventBus(), logger: spyLogger() });
    const seen = await raced.name('t1', offer(a, 'search'));
    expect(seen.byTool.get('a\nsearch')).toBe('a__search');
    expect((await names.cached('t1')).byExposed.get('search')).toEqual({ providerId: 'c', upstreamName: 'search' });
  });

  it('forgets its cache on providers.changed (a deleted provider’s names are gone from the store)', async () => {
    const store = new MemoryToolNameStore();
    const bus = new MemoryEventBus();
    const names = await replica(store, bus);
    await names.name('t1', [...offer(a, 'search'), ...offer(c, 'search')]);
    store.rows.set(
      't1',
      store.rows.get('t1')!.filter((r) => r.providerId !== 'a'),
    );
    await bus.publish('providers.changed', { providerId: 'a' });
    expect([...(await names.cached('t1')).byExposed.keys()]).toEqual(['c__search']);
  });

  it('names at most MAX_NAMES_PER_PROVIDER tools of one provider', async () => {
    const names = await replica(new MemoryToolNameStore());
    const many = offer(a, ...Array.from({ length: MAX_NAMES_PER_PROVIDER + 5 }, (_, i) => `tool_${i}`));
    expect((await names.name('t1', many)).perProvider.get('a')).toBe(MAX_NAMES_PER_PROVIDER);
  });
});
