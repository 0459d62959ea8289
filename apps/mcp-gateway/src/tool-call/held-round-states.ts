import { open, seal, type Keyring, type Principal, type Subkeys } from '@agentgw/auth';
import { RISK_LEVELS, type RiskLevel } from '@agentgw/core';

/** Starts every requestState the gateway mints for a held call: never taken for an upstream's (passed on verbatim) nor another round's. */
export const HELD_ROUND_PREFIX = 'agentgw-held:';

/** What a held call's round stands for: its confirmation, the audit record the retry finishes, and what the call was. */
export interface HeldRoundState {
  confirmationId: string;
  auditId: string;
  providerId: string;
  toolName: string;
  risk: RiskLevel;
}

const AAD = 'agentgw held-call round v1';
/** Longer states are none of ours (and are not decrypted). */
const MAX_STATE_LENGTH = 2048;

/**
 * The `requestState` of a held call's input_required round: the round sealed with AES-256-GCM
 * under a subkey of the platform key ring (previous keys still open), with its owner inside (the
 * person, tenant and the OAuth client they called from). Any replica opens it without a lookup;
 * another principal's, another client's, a forged or an altered one opens to nothing. The exact
 * call (arguments) is bound by the hub: its args hash is checked on every answer and release.
 */
export class HeldRoundStates {
  private readonly keys: Subkeys;

  constructor(ring: Pick<Keyring, 'subkeys'>) {
    this.keys = ring.subkeys('agentgw held-call round');
  }

  /** The requestState the client is given for this round. */
  issue(state: HeldRoundState, principal: Principal): string {
    const { confirmationId, auditId, providerId, toolName, risk } = state;
    const plain = JSON.stringify([confirmationId, auditId, providerId, toolName, risk, ownerOf(principal)]);
    return HELD_ROUND_PREFIX + seal(this.keys[0], plain, AAD);
  }

  /** The round a state names, when it was issued to this principal; null otherwise (foreign and forged look alike). */
  open(state: string, principal: Principal): HeldRoundState | null {
    if (!state.startsWith(HELD_ROUND_PREFIX) || state.length > MAX_STATE_LENGTH) return null;
    const sealed = state.slice(HELD_ROUND_PREFIX.length);
    for (const key of this.keys) {
      const plain = open(key, sealed, AAD);
      if (plain === null) continue;
      const parsed: unknown = JSON.parse(plain);
      if (!Array.isArray(parsed) || parsed.length !== 6) return null;
      const [confirmationId, auditId, providerId, toolName, risk, owner] = parsed as unknown[];
      if (owner !== ownerOf(principal) || !RISK_LEVELS.includes(risk as RiskLevel)) return null;
      if (![confirmationId, auditId, providerId, toolName].every((field) => typeof field === 'string')) return null;
      return { confirmationId, auditId, providerId, toolName, risk } as HeldRoundState;
    }
    return null;
  }
}

/** Whose round it is: the person, their agent (none, for a round), end user and tenant, and the OAuth client they call from. */
const ownerOf = (principal: Principal): string =>
  JSON.stringify([
    principal.userId,
    principal.agentId,
    principal.endUserId,
    principal.tenantId,
    principal.via === 'oauth' ? principal.oauth.clientId : null,
  ]);
