import { describe, expect, it } from 'vitest';
import { callHash } from './call-hash.js';

const call = {
  agentId: 'agent-1',
  endUserId: 'user-1',
  providerId: 'github',
  toolName: 'delete_repo',
  arguments: { repo: 'acme/site', options: { force: true, keep: ['a', 'b'] } },
};

describe('callHash', () => {
  it('is the same for the same call whatever the key order', () => {
    const reordered = { ...call, arguments: { options: { keep: ['a', 'b'], force: true }, repo: 'acme/site' } };
    expect(callHash(reordered)).toBe(callHash(call));
    expect(callHash(call)).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ['agent', { agentId: 'agent-2' }],
    ['end user', { endUserId: 'user-2' }],
    ['provider', { providerId: 'gitlab' }],
    ['tool', { toolName: 'archive_repo' }],
    ['an argument', { arguments: { ...call.arguments, repo: 'acme/other' } }],
    ['a nested argument', { arguments: { ...call.arguments, options: { force: false, keep: ['a', 'b'] } } }],
    ['array order', { arguments: { ...call.arguments, options: { force: true, keep: ['b', 'a'] } } }],
    ['an added argument', { arguments: { ...call.arguments, extra: null } }],
  ])('changes when the %s changes', (_what, change) => {
    expect(callHash({ ...call, ...change })).not.toBe(callHash(call));
  });

  it('keeps null apart from a missing end user string', () => {
    expect(callHash({ ...call, endUserId: null })).not.toBe(callHash({ ...call, endUserId: 'null' }));
  });
});
