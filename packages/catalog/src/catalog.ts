import type { Principal } from '@agentgw/auth';
import type { PolicyDecision, Unsubscribe } from '@agentgw/core';
import type { AccessRule } from './access-rules.js';
import { AgentDirectory, type AgentRecord } from './agent-directory.js';
import { catalogContext, type CatalogDeps } from './catalog-context.js';
import { ProviderDirectory, type ProviderRecord } from './provider-directory.js';
import { RuleDirectory, type DecisionInput } from './rule-directory.js';

export interface CatalogOptions {
  /** Bound on staleness of a cached agent should an `agent.changed` event be missed (default 30 s). */
  agentTtlMs?: number;
  /** The same for providers and rules (default 60 s). */
  ttlMs?: number;
}

/** Agents as the hot path reads them: auth's credential checks, the kill switch, invoke, MCP. */
export interface AgentCatalog {
  /** The agent or null, whatever its state and tenant (cached). */
  get(agentId: string): Promise<AgentRecord | null>;
  /** The agent whose runtime token hashes to `hash`, or null; callers compare `runtimeTokenHash` (cached). */
  byTokenHash(hash: string): Promise<AgentRecord | null>;
  /** The agent the principal may address: invisible → 404, disabled → 403 AGENT_DISABLED (cached). */
  getFor(principal: Principal, agentId: string): Promise<AgentRecord>;
  /** The opened upstream secret or null, opened once per cached record; unopenable → 503. */
  upstreamSecret(agent: AgentRecord): string | null;
}

/** Tool providers as routing reads them, in routing order, with their opened secrets. */
export interface ProviderCatalog {
  /** Providers visible to the principal, in routing order (cached). */
  visibleTo(principal: Principal): Promise<ProviderRecord[]>;
  /** Providers a call acting for the principal routes over: global + the tenant it acts in, admins included (cached). */
  routableFor(principal: Principal): Promise<ProviderRecord[]>;
  get(providerId: string): Promise<ProviderRecord | null>;
  /** The provider the principal may address; invisible or unknown → 404 (cached). */
  getFor(principal: Principal, providerId: string): Promise<ProviderRecord>;
  /** The opened auth secret or null, opened once per cached record; unopenable → 503. */
  authSecret(provider: ProviderRecord): string | null;
}

/** Access rules as a call is decided with them. */
export interface RuleCatalog {
  /** The tool policy's decision, risk and matched rule (cached rules). */
  decide(input: DecisionInput): Promise<PolicyDecision<AccessRule>>;
  /** Provider-level access: does an allow-class rule of the agent name the provider or `*`? (cached rules) */
  providerAllowed(input: { agentId: string; tenantId: string | null; providerId: string }): Promise<boolean>;
}

/**
 * The hot-path reader of agents, providers and rules. One started instance per process is shared
 * by auth and every service (`ServiceDeps.catalog`); writes and listings are `CatalogAdmin`'s.
 */
export interface Catalog {
  agents: AgentCatalog;
  providers: ProviderCatalog;
  rules: RuleCatalog;
  /** Subscribes the caches to `agent.changed`, `providers.changed`, `rules.changed`; until then every read queries. */
  start(): Promise<void>;
  /** Unsubscribes and empties the caches. */
  stop(): Promise<void>;
}

/** The catalog reader over the given deps; see the package README for the contract. */
export function createCatalog(deps: CatalogDeps, options: CatalogOptions = {}): Catalog {
  const ctx = catalogContext(deps);
  const ttlMs = options.ttlMs ?? 60_000;
  const agents = new AgentDirectory(ctx, options.agentTtlMs ?? 30_000);
  const providers = new ProviderDirectory(ctx, ttlMs);
  const rules = new RuleDirectory(ctx, ttlMs);
  let unsubscribes: Unsubscribe[] = [];

  return {
    agents: {
      get: (id) => agents.get(id),
      byTokenHash: (hash) => agents.byTokenHash(hash),
      getFor: (principal, id) => agents.getFor(principal, id),
      upstreamSecret: (agent) => agents.upstreamSecret(agent),
    },
    providers: {
      visibleTo: (principal) => providers.visibleTo(principal),
      routableFor: (principal) => providers.routableFor(principal),
      get: (id) => providers.get(id),
      getFor: (principal, id) => providers.getFor(principal, id),
      authSecret: (provider) => providers.authSecret(provider),
    },
    rules: {
      decide: (input) => rules.decide(input),
      providerAllowed: (input) => rules.providerAllowed(input),
    },
    async start() {
      if (unsubscribes.length > 0) return;
      unsubscribes = await Promise.all([agents.subscribe(), providers.subscribe(), rules.subscribe()]);
    },
    async stop() {
      const current = unsubscribes;
      unsubscribes = [];
      await Promise.all(current.map((unsubscribe) => unsubscribe()));
    },
  };
}
