import { ManualClock } from '@agentgw/core';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_TOKEN_LIFETIME_SECONDS } from '@agentgw/auth';
import { SESSION_TOKEN_MIN_REMAINING_MS, SessionTokens } from './session-tokens.js';

describe('SessionTokens', () => {
  let deps: TestDeps;
  beforeAll(async () => {
    deps = await createTestDeps({ backend: 'pglite' });
  });
  afterAll(async () => {
    await deps.close();
  });

  const input = { endUserId: 'u1', email: 'u1@example.test', roles: ['agent_creator' as const], tenantId: 't1', agentId: 'a1', requestId: 'req_1' };

  it('reuses one verified token per agent and end user, and signs anew for any other identity', async () => {
    const tokens = new SessionTokens(deps.auth, new ManualClock(Date.now()));
    const first = await tokens.tokenFor(input);
    expect(await deps.auth.verifySessionToken(first, { agentId: 'a1' })).toMatchObject({ endUserId: 'u1', tenantId: 't1', roles: ['agent_creator'] });
    expect(await tokens.tokenFor({ ...input, requestId: 'req_2' })).toBe(first);
    const others = await Promise.all([
      tokens.tokenFor({ ...input, agentId: 'a2' }),
      tokens.tokenFor({ ...input, endUserId: 'u2' }),
      tokens.tokenFor({ ...input, roles: ['admin'] }),
      tokens.tokenFor({ ...input, tenantId: null }),
      tokens.tokenFor({ ...input, email: null }),
    ]);
    for (const other of others) expect(other).not.toBe(first);
    expect(await deps.auth.verifySessionToken(others[0]!, { agentId: 'a2' })).toMatchObject({ agentId: 'a2' });
  });

  it('hands a token out only while enough of its lifetime is left', async () => {
    const clock = new ManualClock(Date.now());
    const tokens = new SessionTokens(deps.auth, clock);
    const first = await tokens.tokenFor(input);
    clock.advance(SESSION_TOKEN_LIFETIME_SECONDS * 1000 - SESSION_TOKEN_MIN_REMAINING_MS - 1);
    expect(await tokens.tokenFor(input)).toBe(first);
    clock.advance(2);
    // Signed a second or more later than the first, so the `iat`/`exp` differ.
    await new Promise((r) => setTimeout(r, 1100));
    expect(await tokens.tokenFor(input)).not.toBe(first);
  });
});
