import { evaluatePolicy, type PolicyDecision, type Unsubscribe } from '@agentgw/core';
import { toAccessRule, type AccessRule, type SubjectType } from './access-rules.js';
import type { CatalogContext } from './catalog-context.js';
import { LiveCache } from './live-cache.js';

/** What a runtime decision is about: the calling agent, the real end user, the tenant the call acts in. */
export interface DecisionInput {
  agentId?: string | null;
  userId?: string | null;
  /** The scope the call acts in (`tenantScope` of the principal); rules of other tenants and private scopes never apply. */
  tenantId: string | null;
  providerId: string;
  toolName: string;
}

/**
 * Access rules by subject (`agent:<id>`, `user:<id>`), cached in memory and dropped on
 * `rules.changed` (the subject named, or everything when none is), so a decision does no query
 * in steady state. The answers themselves are kept too, per (user, agent, tenant, provider,
 * tool): a call repeated does not gather and sort the rules again. Any `rules.changed` drops
 * every kept answer (an answer depends on two subjects' rules); they share the rules' TTL.
 */
export class RuleDirectory {
  private readonly cache: LiveCache<AccessRule[]>;
  private readonly decisions: LiveCache<PolicyDecision<AccessRule>>;
  private readonly reach: LiveCache<boolean>;

  constructor(
    private readonly ctx: CatalogContext,
    ttlMs: number,
  ) {
    const options = { ttlMs, max: 20_000, clock: ctx.clock };
    this.cache = new LiveCache(options);
    this.decisions = new LiveCache(options);
    this.reach = new LiveCache(options);
  }

  /** Subscribes to `rules.changed`; the reader's `start()` calls it. */
  async subscribe(): Promise<Unsubscribe> {
    const { bus } = this.ctx;
    const unsubscribes = await Promise.all([
      this.cache.listen(bus, 'rules.changed', ({ subjectType, subjectId }) =>
        subjectType === null || subjectId === null ? null : subjectKey(subjectType, subjectId),
      ),
      this.decisions.listen(bus, 'rules.changed', () => null),
      this.reach.listen(bus, 'rules.changed', () => null),
    ]);
    return async () => {
      await Promise.all(unsubscribes.map((unsubscribe) => unsubscribe()));
    };
  }

  /** The tool policy's answer (`evaluatePolicy`) over the rules of the user and the agent in the tenant. */
  decide(input: DecisionInput): Promise<PolicyDecision<AccessRule>> {
    const key = `${input.userId ?? ''}\n${input.agentId ?? ''}\n${input.tenantId ?? ''}\n${input.providerId}\n${input.toolName}`;
    return this.decisions.getOrLoad(key, async () =>
      evaluatePolicy({
        rules: await this.rulesOf(input),
        userId: input.userId,
        agentId: input.agentId,
        providerId: input.providerId,
        toolName: input.toolName,
      }),
    );
  }

  /**
   * The provider-level access rule: may the agent reach this provider at all? Yes when one of
   * its allow-class rules (`allow` or `require_confirmation`) names the provider or `*`.
   */
  providerAllowed(input: { agentId: string; tenantId: string | null; providerId: string }): Promise<boolean> {
    const key = `${input.agentId}\n${input.tenantId ?? ''}\n${input.providerId}`;
    return this.reach.getOrLoad(key, async () =>
      (await this.rulesOf({ agentId: input.agentId, tenantId: input.tenantId })).some(
        (rule) => rule.action !== 'deny' && (rule.providerId === input.providerId || rule.providerId === '*'),
      ),
    );
  }

  private async rulesOf(input: {
    agentId?: string | null;
    userId?: string | null;
    tenantId: string | null;
  }): Promise<AccessRule[]> {
    const subjects: [SubjectType, string][] = [];
    if (input.userId) subjects.push(['user', input.userId]);
    if (input.agentId) subjects.push(['agent', input.agentId]);
    const lists = await Promise.all(
      subjects.map(([type, id]) => this.cache.getOrLoad(subjectKey(type, id), () => this.load(type, id))),
    );
    return lists.flat().filter((rule) => rule.tenantId === null || rule.tenantId === input.tenantId);
  }

  private async load(type: SubjectType, id: string): Promise<AccessRule[]> {
    const rows = await this.ctx.db
      .selectFrom('access_rules')
      .selectAll()
      .where('subject_type', '=', type)
      .where('subject_id', '=', id)
      .execute();
    return rows.map(toAccessRule);
  }
}

const subjectKey = (type: SubjectType, id: string): string => `${type}:${id}`;
