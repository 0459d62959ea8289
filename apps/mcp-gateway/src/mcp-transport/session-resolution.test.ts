import type { Principal } from '@agentgw/auth';
import { describe, expect, it } from 'vitest';
import type { SessionClaims } from '../session-ids.js';
import { resolveSession, type SessionLookup } from './session-resolution.js';

const principal = { userId: 'u1', agentId: null, endUserId: 'u1', apiKey: null } as Principal;
const claims = (over: Partial<SessionClaims> = {}): SessionClaims => ({
  sid: 's1',
  protocolVersion: '2025-06-18',
  scope: 'unified',
  userId: 'u1',
  agentId: null,
  endUserId: 'u1',
  iat: 0,
  ...over,
});
const lookup = (sealed: Record<string, SessionClaims>, stored: Record<string, object>): SessionLookup => ({
  codec: { open: (id) => sealed[id] ?? null },
  sessions: { get: async (sid) => (stored[sid] as never) ?? null },
});
const unified = { kind: 'unified', providerFilter: null, toolsParam: null } as const;
const statusOf = async (
  deps: SessionLookup,
  id: string | null,
  endpoint: Parameters<typeof resolveSession>[2] = unified,
) => {
  const resolved = await resolveSession(deps, principal, endpoint, id);
  return resolved.ok ? 'ok' : resolved.reply.status;
};

describe('resolveSession', () => {
  it('finds the live session its caller opened on this endpoint, with its upstream sessions', async () => {
    const deps = lookup({ good: claims() }, { s1: { p1: { sessionId: 'up' } } });
    expect(await resolveSession(deps, principal, unified, 'good')).toEqual({
      ok: true,
      session: { claims: claims(), upstreams: { p1: { sessionId: 'up' } } },
    });
  });

  it('answers 400 without an id, and the same 404 for forged, foreign, other-endpoint and ended sessions', async () => {
    const deps = lookup(
      {
        other: claims({ userId: 'u2', endUserId: 'u2' }),
        proxy: claims({ scope: 'proxy:p1' }),
        ended: claims({ sid: 'gone' }),
        good: claims(),
      },
      { s1: {} },
    );
    expect(await statusOf(deps, null)).toBe(400);
    for (const id of ['forged', 'other', 'proxy', 'ended']) expect([id, await statusOf(deps, id)]).toEqual([id, 404]);
    expect(await statusOf(deps, 'good', { kind: 'proxy', providerId: 'p1' })).toBe(404);
    expect(await statusOf(deps, 'good')).toBe('ok');
  });
});
