import { assertAgentActive, isVisibleTo, type Principal } from '@agentgw/auth';
import { MemoryCache, NotFoundError, type ToolSurface, type Unsubscribe } from '@agentgw/core';
import type { AgentRow } from '@agentgw/db';
import type { RequiredCredential } from './agents.js';
import type { CatalogContext } from './catalog-context.js';
import { LiveCache } from './live-cache.js';
import { OpenedSecrets } from './sealed-secrets.js';

/**
 * An agent as the hot path needs it (auth's credential checks, invoke, MCP). The upstream secret
 * stays sealed until asked for; the runtime token is only its hash.
 */
export interface AgentRecord {
  id: string;
  name: string;
  description: string | null;
  upstreamUrl: string;
  upstreamSecretSealed: string | null;
  isActive: boolean;
  requireConfirmation: boolean;
  /** What the unified MCP endpoint lists for it (`?tools=` on the URL overrides it). */
  toolSurface: ToolSurface;
  requiredCredentials: RequiredCredential[];
  tenantId: string | null;
  ownerId: string | null;
  /** SHA-256 hex of the current runtime token (`hashToken` of `@agentgw/auth`). */
  runtimeTokenHash: string;
}

/**
 * Agents by id and by runtime-token hash, cached in memory and dropped on `agent.changed` (the
 * kill switch's speed depends on it). Auth reads its agents here too, so there is one copy.
 */
export class AgentDirectory {
  private readonly cache: LiveCache<AgentRecord | null>;
  // Hash → id keeps hits only, so presenting junk tokens cannot flush it. An entry may outlive a
  // rotation: the record is re-read through the id cache and its hash compared by the caller.
  private readonly idsByTokenHash: MemoryCache<string>;
  private readonly secrets: OpenedSecrets<AgentRecord>;

  constructor(
    private readonly ctx: CatalogContext,
    ttlMs: number,
  ) {
    this.cache = new LiveCache({ ttlMs, max: 10_000, clock: ctx.clock });
    this.idsByTokenHash = new MemoryCache({ ttlMs, max: 10_000, clock: ctx.clock });
    this.secrets = new OpenedSecrets(ctx, 'agent', (agent) => ({ id: agent.id, sealed: agent.upstreamSecretSealed }));
  }

  /** Subscribes to `agent.changed`; the reader's `start()` calls it. */
  async subscribe(): Promise<Unsubscribe> {
    // The cache also forgets a load in flight on delete, so a read racing a disable is not kept.
    const unsubscribe = await this.cache.listen(this.ctx.bus, 'agent.changed', ({ agentId }) => agentId);
    return async () => {
      this.idsByTokenHash.clear();
      await unsubscribe();
    };
  }

  /** The agent or null, whatever its state and tenant. Unknown ids are cached too, so probing them costs no query. */
  get(agentId: string): Promise<AgentRecord | null> {
    return this.cache.getOrLoad(agentId, () => this.load(agentId));
  }

  /**
   * The agent whose runtime token has this hash, or null. The match may be stale (a rotated
   * token's entry): callers compare `runtimeTokenHash` with the presented hash (`sameHash`).
   */
  async byTokenHash(hash: string): Promise<AgentRecord | null> {
    let id = this.cache.live ? this.idsByTokenHash.get(hash) : undefined;
    if (id === undefined) {
      id = (
        await this.ctx.db.selectFrom('agents').select('id').where('runtime_token_hash', '=', hash).executeTakeFirst()
      )?.id;
      if (id === undefined) return null;
      if (this.cache.live) this.idsByTokenHash.set(hash, id);
    }
    return this.get(id);
  }

  /**
   * The agent as the principal may address it: another tenant's agent is 404 (its existence is
   * not revealed), a disabled one 403 AGENT_DISABLED (the kill switch, `assertAgentActive`).
   */
  async getFor(principal: Principal, agentId: string): Promise<AgentRecord> {
    const agent = await this.get(agentId);
    if (!agent || !isVisibleTo(principal, agent.tenantId)) throw new NotFoundError('Agent');
    assertAgentActive(agent);
    return agent;
  }

  /** The plaintext upstream secret (opened once per cached record), or null; unopenable → 503. */
  upstreamSecret(agent: AgentRecord): string | null {
    return this.secrets.of(agent);
  }

  private async load(agentId: string): Promise<AgentRecord | null> {
    const row = await this.ctx.db.selectFrom('agents').selectAll().where('id', '=', agentId).executeTakeFirst();
    return row ? toAgentRecord(row) : null;
  }
}

function toAgentRecord(row: AgentRow): AgentRecord {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    upstreamUrl: row.upstream_url,
    upstreamSecretSealed: row.upstream_secret_enc,
    isActive: row.is_active,
    requireConfirmation: row.require_confirmation,
    toolSurface: row.tool_surface,
    requiredCredentials: Array.isArray(row.required_credentials) ? row.required_credentials : [],
    tenantId: row.tenant_id,
    ownerId: row.owner_id,
    runtimeTokenHash: row.runtime_token_hash,
  };
}
