import { secretBoxFor, isVisibleTo, type Principal, type SecretBox } from '@agentgw/auth';
import { DependencyUnavailableError, ForbiddenError, MemoryCache, NotFoundError } from '@agentgw/core';
import type { ServiceDeps } from '@agentgw/service-kit';

/** An agent as invoke-proxy needs it. The upstream secret stays sealed until an invoke needs it. */
export interface InvocableAgent {
  id: string;
  name: string;
  description: string | null;
  upstreamUrl: string;
  upstreamSecretSealed: string | null;
  isActive: boolean;
  requireConfirmation: boolean;
  requiredCredentials: { serviceType: string; description?: string }[];
  tenantId: string | null;
}

export interface AgentDirectoryOptions {
  /** Upper bound on staleness should an `agent.changed` event be missed (e.g. a Redis reconnect). */
  ttlMs?: number;
}

/**
 * Agents by id, cached in memory so steady-state invokes do no database query. Every replica
 * drops its copy on the bus event `agent.changed`, which is what makes the kill switch take
 * effect at once everywhere.
 */
export class AgentDirectory {
  private readonly cache: MemoryCache<InvocableAgent | null>;
  private readonly secrets: SecretBox;

  constructor(
    private readonly deps: Pick<ServiceDeps, 'db' | 'bus' | 'config' | 'logger'>,
    options: AgentDirectoryOptions = {},
  ) {
    this.cache = new MemoryCache({ ttlMs: options.ttlMs ?? 30_000, max: 10_000 });
    this.secrets = secretBoxFor(deps.config);
    // The cache also forgets a load in flight on delete, so a read racing a disable is not kept.
    this.cache
      .invalidateOn(deps.bus, 'agent.changed', ({ agentId }) => agentId)
      .catch((err: unknown) => deps.logger.error({ err }, 'invoke-proxy could not subscribe to agent.changed'));
  }

  /** The agent or null. Unknown ids are cached too (as null) so probing them costs no query. */
  private get(agentId: string): Promise<InvocableAgent | null> {
    return this.cache.getOrLoad(agentId, () => this.load(agentId));
  }

  /**
   * The agent as the principal may address it: another tenant's agent is 404 (its existence is
   * not revealed), a disabled one 403 AGENT_DISABLED.
   */
  async getFor(principal: Principal, agentId: string): Promise<InvocableAgent> {
    const agent = await this.get(agentId);
    if (!agent || !isVisibleTo(principal, agent.tenantId)) throw new NotFoundError('Agent');
    if (!agent.isActive) throw new ForbiddenError('Agent is disabled', 'AGENT_DISABLED');
    return agent;
  }

  /**
   * The plaintext upstream secret, or null when the agent has none. A secret sealed under another
   * key (CREDENTIAL_ENCRYPTION_KEY changed) is refused rather than silently left out.
   */
  upstreamSecret(agent: InvocableAgent): string | null {
    if (agent.upstreamSecretSealed === null) return null;
    const secret = this.secrets.open(agent.upstreamSecretSealed, agent.id);
    if (secret === null) {
      this.deps.logger.error({ agentId: agent.id }, 'agent upstream secret cannot be unsealed with the current key');
      throw new DependencyUnavailableError('The agent upstream secret cannot be decrypted; set it again');
    }
    return secret;
  }

  private async load(agentId: string): Promise<InvocableAgent | null> {
    const row = await this.deps.db
      .selectFrom('agents')
      .select([
        'id', 'name', 'description', 'upstream_url', 'upstream_secret_enc', 'is_active',
        'require_confirmation', 'required_credentials', 'tenant_id',
      ])
      .where('id', '=', agentId)
      .executeTakeFirst();
    if (!row) return null;
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      upstreamUrl: row.upstream_url,
      upstreamSecretSealed: row.upstream_secret_enc,
      isActive: row.is_active,
      requireConfirmation: row.require_confirmation,
      requiredCredentials: Array.isArray(row.required_credentials) ? row.required_credentials : [],
      tenantId: row.tenant_id,
    };
  }
}
