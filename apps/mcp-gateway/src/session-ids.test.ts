import { secretBoxFor, type SessionTokenPrincipal } from '@agentgw/auth';
import { testConfig } from '@agentgw/service-kit/testing';
import { describe, expect, it } from 'vitest';
import { AuditIdSigner } from './audit-ids.js';
import { SessionIdCodec } from './session-ids.js';

const PLAT_A = 'a1'.repeat(32);
const PLAT_B = 'b2'.repeat(32);
/** The platform ring as mcp-gateway builds it from its configuration (no credential key: distributed). */
const ring = (env: Record<string, string>) => secretBoxFor(testConfig({ CREDENTIAL_ENCRYPTION_KEY: '', ...env }));
const principal = {
  via: 'session_token',
  userId: 'u1',
  agentId: 'a1',
  endUserId: 'u1',
  tenantId: 't1',
} as SessionTokenPrincipal;
const now = new Date('2026-01-01T00:00:00Z');

describe('session ids and audit ids under the platform key', () => {
  it('issued under key A, still valid while A is a previous key, refused once A is dropped', () => {
    const session = new SessionIdCodec(ring({ PLATFORM_SECRETS_KEY: PLAT_A })).issue(
      principal,
      '2025-06-18',
      'unified',
      now,
    );
    const auditId = new AuditIdSigner(ring({ PLATFORM_SECRETS_KEY: PLAT_A })).issue(principal);

    const rotated = ring({ PLATFORM_SECRETS_KEY: PLAT_B, PLATFORM_SECRETS_PREVIOUS_KEYS: PLAT_A });
    expect(new SessionIdCodec(rotated).open(session.id)).toEqual(session.claims);
    expect(new AuditIdSigner(rotated).ownedBy(auditId, principal)).toBe(true);
    expect(new AuditIdSigner(rotated).ownedBy(auditId, { ...principal, userId: 'u2' })).toBe(false);
    // New ones are issued under B and do not verify under A.
    const fresh = new SessionIdCodec(rotated).issue(principal, '2025-06-18', 'unified', now);
    expect(new SessionIdCodec(ring({ PLATFORM_SECRETS_KEY: PLAT_B })).open(fresh.id)).toEqual(fresh.claims);
    expect(new SessionIdCodec(ring({ PLATFORM_SECRETS_KEY: PLAT_A })).open(fresh.id)).toBeNull();

    const newOnly = ring({ PLATFORM_SECRETS_KEY: PLAT_B });
    expect(new SessionIdCodec(newOnly).open(session.id)).toBeNull();
    expect(new AuditIdSigner(newOnly).ownedBy(auditId, principal)).toBe(false);
  });

  it('are not derived from the credential key: the vault’s key neither mints nor verifies them', () => {
    const session = new SessionIdCodec(ring({ PLATFORM_SECRETS_KEY: PLAT_A })).issue(
      principal,
      '2025-06-18',
      'unified',
      now,
    );
    // Same platform key, any credential key: the same session keys.
    expect(
      new SessionIdCodec(ring({ PLATFORM_SECRETS_KEY: PLAT_A, CREDENTIAL_ENCRYPTION_KEY: PLAT_B })).open(session.id),
    ).toEqual(session.claims);
    // The credential key in the platform key's place verifies nothing.
    expect(
      new SessionIdCodec(ring({ PLATFORM_SECRETS_KEY: PLAT_B, CREDENTIAL_ENCRYPTION_KEY: PLAT_A })).open(session.id),
    ).toBeNull();
  });
});
