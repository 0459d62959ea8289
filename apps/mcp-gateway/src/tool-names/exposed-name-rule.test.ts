import { describe, expect, it } from 'vitest';
import {
  assignNames,
  fitName,
  indexNames,
  MAX_EXPOSED_NAME_LENGTH,
  providerSlug,
  type NamingProvider,
  type OfferedTool,
  type ToolNameAssignment,
} from './exposed-name-rule.js';

const provider = (id: string, name = id, namePrefix: string | null = null): NamingProvider => ({
  id,
  name,
  namePrefix,
});
const offer = (p: NamingProvider, ...names: string[]): OfferedTool[] =>
  names.map((upstreamName) => ({ provider: p, upstreamName }));

/** Names a sequence of listings the way the store does: each listing adds names for the tools without one. */
function listings(...rounds: OfferedTool[][]): Map<string, string> {
  const stored: ToolNameAssignment[] = [];
  for (const offered of rounds) stored.push(...assignNames(indexNames(stored), offered));
  return new Map(stored.map((a) => [`${a.providerId}:${a.upstreamName}`, a.exposedName]));
}

const alpha = provider('a1', 'Alpha');
const beta = provider('b1', 'Beta Tools!');
const gamma = provider('c1', 'gamma');

describe('assignNames', () => {
  it('keeps an unclaimed name bare, gives a later collider <slug>__<name>, and a prefixed provider <prefix>__<name>', () => {
    const names = listings([
      ...offer(alpha, 'search', 'read'),
      ...offer(beta, 'search'),
      ...offer(provider('g1', 'GitHub', 'gh'), 'search'),
    ]);
    expect(Object.fromEntries(names)).toEqual({
      'a1:search': 'search',
      'a1:read': 'read',
      'b1:search': 'beta_tools__search',
      'g1:search': 'gh__search',
    });
  });

  it('never renames a named tool when a provider is added (even one first in routing order) or removed', () => {
    const before = listings([...offer(alpha, 'search'), ...offer(beta, 'search')]);
    // gamma comes first now (higher priority): it still gets the disambiguated name.
    const added = listings(
      [...offer(alpha, 'search'), ...offer(beta, 'search')],
      [...offer(gamma, 'search'), ...offer(alpha, 'search'), ...offer(beta, 'search')],
    );
    expect(added.get('a1:search')).toBe(before.get('a1:search'));
    expect(added.get('b1:search')).toBe(before.get('b1:search'));
    expect(added.get('c1:search')).toBe('gamma__search');
    // Removing alpha (its rows go with it) leaves beta's and gamma's names as they were.
    const stored = [...added]
      .filter(([key]) => !key.startsWith('a1:'))
      .map(([key, exposedName]) => ({ providerId: key.split(':')[0]!, upstreamName: key.split(':')[1]!, exposedName }));
    expect(assignNames(indexNames(stored), [...offer(beta, 'search'), ...offer(gamma, 'search')])).toEqual([]);
  });

  it('is deterministic: the same listings give the same names', () => {
    const round = [...offer(beta, 'x', 'search'), ...offer(alpha, 'search', 'x'), ...offer(gamma, 'search')];
    expect(listings(round)).toEqual(listings(round));
  });

  it('numbers the tag when a disambiguated name is taken (by a literal upstream name, or two providers with one slug)', () => {
    const twin = provider('b2', 'beta tools');
    const names = listings([
      ...offer(alpha, 'search', 'beta_tools__search'),
      ...offer(beta, 'search'),
      ...offer(twin, 'search'),
    ]);
    expect(names.get('b1:search')).toBe('beta_tools_2__search');
    expect(names.get('b2:search')).toBe('beta_tools_3__search');
  });

  it('keeps every exposed name within 64 characters, long names told apart by a hash', () => {
    const long = 'x'.repeat(70);
    const names = listings([...offer(alpha, long, `${long}y`), ...offer(provider('l1', 'a'.repeat(40)), long)]);
    for (const name of names.values()) expect(name.length).toBeLessThanOrEqual(MAX_EXPOSED_NAME_LENGTH);
    expect(new Set(names.values()).size).toBe(3);
    expect(names.get(`l1:${long}`)).toMatch(/^a{24}__x+_[0-9a-f]{6}$/);
  });
});

describe('providerSlug and fitName', () => {
  it('makes a short [a-z0-9_] tag of the name, or of the id when nothing is left', () => {
    expect(providerSlug({ id: 'x', name: '  My GitHub (prod) ' })).toBe('my_github_prod');
    expect(providerSlug({ id: '1f2e-33', name: 'Лукоморье' })).toBe('p1f2e33');
  });

  it('leaves a short name alone and cuts a long one to the bound', () => {
    expect(fitName('read')).toBe('read');
    expect(fitName('r'.repeat(100))).toHaveLength(64);
    expect(fitName('r'.repeat(100))).not.toBe(fitName(`${'r'.repeat(99)}s`));
  });
});
