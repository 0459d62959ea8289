import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Keyring, Principal, Subkeys } from '@agentgw/auth';
import { newTimeOrderedId } from '@agentgw/core';

/**
 * Audit ids the tool gate hands out, bound to the principal that opened the record:
 * `<uuid>.<mac>`, the MAC (HMAC-SHA256, 128 bits, key: a subkey of the platform key ring, PLATFORM_SECRETS_KEY) over the
 * uuid and the owner: the acting user (a bare runtime token: its agent) and the tenant. The user,
 * not the agent, so a runtime that evaluated with `X-Agent-Id` may complete with the spec's audit
 * headers (`X-Api-Key`, `X-User-Id`) alone. `POST /tool-gate/audit` checks it without a database
 * or Redis read, on any replica; the whole string is the audit row's id.
 */
export class AuditIdSigner {
  private readonly keys: Subkeys;

  constructor(ring: Pick<Keyring, 'subkeys'>) {
    this.keys = ring.subkeys('agentgw tool-gate audit-id');
  }

  /** A new audit id owned by `principal`. */
  issue(principal: Principal): string {
    const id = newTimeOrderedId();
    return `${id}.${mac(this.keys[0], id, principal).toString('base64url')}`;
  }

  /** Whether `auditId` was issued to `principal` (false for foreign, forged or altered ids). */
  ownedBy(auditId: string, principal: Principal): boolean {
    const dot = auditId.indexOf('.');
    if (dot <= 0 || auditId.length > 128) return false;
    const given = Buffer.from(auditId.slice(dot + 1), 'base64url');
    if (given.length !== MAC_BYTES) return false;
    return this.keys.some((key) => timingSafeEqual(given, mac(key, auditId.slice(0, dot), principal)));
  }
}

const MAC_BYTES = 16;

function mac(key: Uint8Array, id: string, principal: Principal): Buffer {
  // JSON keeps the fields apart and null distinct from "".
  const actor = principal.userId !== null ? `user:${principal.userId}` : `agent:${principal.agentId ?? ''}`;
  const owner = JSON.stringify([id, actor, principal.tenantId]);
  return createHmac('sha256', key).update(owner).digest().subarray(0, MAC_BYTES);
}
