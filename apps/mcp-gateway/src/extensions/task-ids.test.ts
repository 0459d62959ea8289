import { secretBoxFor, type UserJwtPrincipal } from '@agentgw/auth';
import { testConfig } from '@agentgw/service-kit/testing';
import { describe, expect, it } from 'vitest';
import { TaskIdCodec, type TaskRef } from './task-ids.js';

const codec = new TaskIdCodec(
  secretBoxFor(testConfig({ CREDENTIAL_ENCRYPTION_KEY: '', PLATFORM_SECRETS_KEY: 'c3'.repeat(32) })),
);
const alice = { via: 'jwt', userId: 'alice', agentId: null, endUserId: 'alice', tenantId: null } as UserJwtPrincipal;
const bob = { ...alice, userId: 'bob', endUserId: 'bob' } as UserJwtPrincipal;

describe('task ids of both kinds', () => {
  const refs: TaskRef[] = [
    { kind: 'provider', providerId: 'p1', upstreamTaskId: 'upstream-task-0001' },
    {
      kind: 'held',
      confirmationId: 'confirmation-0001',
      auditId: 'a1',
      providerId: 'p1',
      toolName: 'drop',
      risk: 'high',
    },
  ];

  it('opens each kind for its owner only, as it was issued; a forged id opens to nothing', () => {
    for (const ref of refs) {
      const id = codec.issue(ref, alice);
      // Long markers: a two-letter one turns up in random base64url by chance (CI of 9d3fbda).
      expect(id).not.toContain(ref.kind === 'held' ? ref.confirmationId : ref.upstreamTaskId);
      expect(codec.open(id, alice)).toEqual(ref);
      expect(codec.open(id, bob)).toBeNull();
      expect(codec.open(`${id.slice(0, -4)}AAAA`, alice)).toBeNull();
    }
  });
});
