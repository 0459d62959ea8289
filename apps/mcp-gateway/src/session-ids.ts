import { randomUUID } from 'node:crypto';
import { open, seal } from '@agentgw/auth';
import type { Keyring, Principal, Subkeys } from '@agentgw/auth';

/**
 * What a gateway MCP session is, sealed (AES-256-GCM) into its `Mcp-Session-Id`: who opened it,
 * on which endpoint, speaking which revision. Any replica opens it without a lookup; the upstream
 * sessions it opens later live in the session store under `sid`.
 */
export interface SessionClaims {
  /** Random id: the session store's key. */
  sid: string;
  protocolVersion: string;
  /** `unified`, or the provider id of a per-provider proxy session. */
  scope: string;
  /** The principal that opened it; a request of another principal cannot continue it. */
  userId: string | null;
  agentId: string | null;
  endUserId: string | null;
  /** Seconds since the epoch. */
  iat: number;
  /** The relayable client capabilities it declared in `initialize` (`relayableCapabilities`); absent on sessions sealed before them and when none. */
  caps?: Record<string, unknown>;
}

const AAD = 'agentgw mcp-session v1';

/** Seals and opens session ids with a subkey of the platform key ring (PLATFORM_SECRETS_KEY; previous keys still open). */
export class SessionIdCodec {
  private readonly keys: Subkeys;

  constructor(ring: Pick<Keyring, 'subkeys'>) {
    this.keys = ring.subkeys('agentgw mcp-session-id');
  }

  /** A new session for `principal`. */
  issue(
    principal: Principal,
    protocolVersion: string,
    scope: string,
    now: Date,
    caps: Record<string, unknown> = {},
  ): { id: string; claims: SessionClaims } {
    const claims: SessionClaims = {
      sid: randomUUID(),
      protocolVersion,
      scope,
      userId: principal.userId,
      agentId: principal.agentId,
      endUserId: principal.endUserId,
      iat: Math.floor(now.getTime() / 1000),
      ...(Object.keys(caps).length > 0 ? { caps } : {}),
    };
    return { id: seal(this.keys[0], JSON.stringify(claims), AAD), claims };
  }

  /** The claims, or null when the id is not one of ours (forged, altered, or too long to be one). */
  open(id: string): SessionClaims | null {
    if (id.length > 1024) return null;
    for (const key of this.keys) {
      const plain = open(key, id, AAD);
      if (plain !== null) {
        try {
          return JSON.parse(plain) as SessionClaims;
        } catch {
          return null;
        }
      }
    }
    return null;
  }
}

/** Whether `principal` is the one that opened the session (same user, agent and end user). */
export const sessionBelongsTo = (claims: SessionClaims, principal: Principal): boolean =>
  claims.userId === principal.userId &&
  claims.agentId === principal.agentId &&
  claims.endUserId === principal.endUserId;

/** Whose session it is, for the per-owner cap of the session store (the same triple sessionBelongsTo compares). */
export const sessionOwner = (claims: SessionClaims): string =>
  JSON.stringify([claims.userId, claims.agentId, claims.endUserId]);
