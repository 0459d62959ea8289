import { open, seal, type Keyring, type Principal, type Subkeys } from '@agentgw/auth';

/** What a gateway task id stands for: the provider that made the task, its own id there, and the principal it belongs to. */
export interface TaskRef {
  providerId: string;
  upstreamTaskId: string;
}

const AAD = 'agentgw mcp-task-id v1';
/** Longer ids are no ids of ours (and are not decrypted). */
const MAX_ID_LENGTH = 2048;

/**
 * Task ids of the tasks extension (SEP-2663) as clients see them: `{ provider, upstream task id,
 * owner }` sealed with AES-256-GCM under a subkey of the platform key ring (previous keys still
 * open). The owner (user, agent, end user, tenant) is inside: a principal presenting another's
 * id — or a forged, altered, foreign one — learns nothing and reaches nothing. Any replica opens
 * it without a lookup; two providers' equal task ids never meet.
 */
export class TaskIdCodec {
  private readonly keys: Subkeys;

  constructor(ring: Pick<Keyring, 'subkeys'>) {
    this.keys = ring.subkeys('agentgw mcp-task-id');
  }

  /** The id the client is given for a provider's task. */
  issue(ref: TaskRef, principal: Principal): string {
    return seal(this.keys[0], JSON.stringify([ref.providerId, ref.upstreamTaskId, ownerOf(principal)]), AAD);
  }

  /** The task an id names, when it was issued to this principal; null otherwise (no difference shown between foreign and forged). */
  open(id: string, principal: Principal): TaskRef | null {
    if (id.length > MAX_ID_LENGTH) return null;
    for (const key of this.keys) {
      const plain = open(key, id, AAD);
      if (plain === null) continue;
      const parsed: unknown = JSON.parse(plain);
      if (!Array.isArray(parsed) || parsed.length !== 3) return null;
      const [providerId, upstreamTaskId, owner] = parsed as unknown[];
      if (typeof providerId !== 'string' || typeof upstreamTaskId !== 'string' || owner !== ownerOf(principal))
        return null;
      return { providerId, upstreamTaskId };
    }
    return null;
  }
}

/** Whose task it is: the identity a call goes upstream with (user, agent, end user, tenant). */
const ownerOf = (principal: Principal): string =>
  JSON.stringify([principal.userId, principal.agentId, principal.endUserId, principal.tenantId]);
