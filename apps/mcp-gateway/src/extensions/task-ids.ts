import { open, seal, type Keyring, type Principal, type Subkeys } from '@agentgw/auth';
import { RISK_LEVELS, type RiskLevel } from '@agentgw/core';

/** A provider's task: the provider that made it and its own id there. */
export interface ProviderTaskRef {
  kind: 'provider';
  providerId: string;
  upstreamTaskId: string;
}

/** The gateway's own task of a held call (tool-call/held-call-task.ts): its confirmation, the audit record it finishes, and what the call was. */
export interface HeldTaskRef {
  kind: 'held';
  confirmationId: string;
  auditId: string;
  providerId: string;
  toolName: string;
  risk: RiskLevel;
}

/** What a gateway task id stands for: one of the two kinds of task a client is given. */
export type TaskRef = ProviderTaskRef | HeldTaskRef;

const AAD = 'agentgw mcp-task-id v1';
/** Longer ids are no ids of ours (and are not decrypted). */
const MAX_ID_LENGTH = 2048;
/** The tag of a held-call task inside the sealed id (a provider task's id has none: ids issued before it still open). */
const HELD_TAG = 'held';

/**
 * Task ids of the tasks extension (SEP-2663) as clients see them, the one place that knows their
 * kinds: a provider's task (`{ provider, upstream task id, owner }`) or a held call's
 * (`{ 'held', confirmation, audit id, provider, tool, risk, owner }`), sealed with AES-256-GCM under
 * a subkey of the platform key ring (previous keys still open). The owner (user, agent, end user,
 * tenant) is inside: a principal presenting another's id — or a forged, altered, foreign one —
 * learns nothing and reaches nothing. Any replica opens it without a lookup.
 */
export class TaskIdCodec {
  private readonly keys: Subkeys;

  constructor(ring: Pick<Keyring, 'subkeys'>) {
    this.keys = ring.subkeys('agentgw mcp-task-id');
  }

  /** The id the client is given for a task. */
  issue(ref: TaskRef, principal: Principal): string {
    const fields =
      ref.kind === 'provider'
        ? [ref.providerId, ref.upstreamTaskId]
        : [HELD_TAG, ref.confirmationId, ref.auditId, ref.providerId, ref.toolName, ref.risk];
    return seal(this.keys[0], JSON.stringify([...fields, ownerOf(principal)]), AAD);
  }

  /** The task an id names, when it was issued to this principal; null otherwise (no difference shown between foreign and forged). */
  open(id: string, principal: Principal): TaskRef | null {
    if (id.length > MAX_ID_LENGTH) return null;
    for (const key of this.keys) {
      const plain = open(key, id, AAD);
      if (plain === null) continue;
      const parsed: unknown = JSON.parse(plain);
      if (!Array.isArray(parsed) || parsed.at(-1) !== ownerOf(principal)) return null;
      return refOf(parsed.slice(0, -1) as unknown[]);
    }
    return null;
  }
}

/** The ref of an opened id's fields (its owner checked already); null when they are of neither kind. */
function refOf(fields: unknown[]): TaskRef | null {
  if (!fields.every((field): field is string => typeof field === 'string')) return null;
  const strings = fields;
  if (strings.length === 2) return { kind: 'provider', providerId: strings[0]!, upstreamTaskId: strings[1]! };
  const [tag, confirmationId, auditId, providerId, toolName, risk] = strings;
  if (strings.length !== 6 || tag !== HELD_TAG || !RISK_LEVELS.includes(risk as RiskLevel)) return null;
  return {
    kind: 'held',
    confirmationId: confirmationId!,
    auditId: auditId!,
    providerId: providerId!,
    toolName: toolName!,
    risk: risk as RiskLevel,
  };
}

/** Whose task it is: the identity a call goes upstream with (user, agent, end user, tenant). */
const ownerOf = (principal: Principal): string =>
  JSON.stringify([principal.userId, principal.agentId, principal.endUserId, principal.tenantId]);
