import { secretBoxFor, type Principal } from '@agentgw/auth';
import type { Clock, Config, EventBus, Logger, PolicyDecision, Unsubscribe } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import {
  accessRulesByProvider,
  createAccessRule,
  deleteAccessRule,
  evaluateAccess,
  getAccessRule,
  listAccessRules,
  listAgentRules,
  replaceAgentRules,
  updateAccessRule,
  RuleDirectory,
  type AccessRule,
  type AccessRuleFilters,
  type AccessRulePatch,
  type AgentRuleInput,
  type DecisionInput,
  type EvaluationInput,
  type NewAccessRuleInput,
} from './access-rules.js';
import {
  AgentDirectory,
  createAgent,
  deleteAgent,
  getAgent,
  listAgents,
  regenerateRuntimeToken,
  setAgentActive,
  updateAgent,
  type Agent,
  type AgentPatch,
  type AgentRecord,
  type AgentSummary,
  type NewAgentInput,
} from './agents.js';
import type { CatalogContext } from './catalog-context.js';
import {
  createToolProvider,
  deleteToolProvider,
  getToolProvider,
  listToolProviders,
  ProviderDirectory,
  updateToolProvider,
  type NewToolProviderInput,
  type ProviderRecord,
  type ToolProvider,
  type ToolProviderPatch,
} from './tool-providers.js';

/** What the catalog needs from a service's deps (a `ServiceDeps` fits). */
export interface CatalogDeps {
  config: Config;
  db: Kysely<Database>;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
}

export interface CatalogOptions {
  /** Bound on staleness of a cached agent should an `agent.changed` event be missed (default 30 s). */
  agentTtlMs?: number;
  /** The same for providers and rules (default 60 s). */
  ttlMs?: number;
}

/** Agents: cached reads for the hot path (kill switch included), admin reads and writes. */
export interface AgentCatalog {
  /** The agent or null, whatever its state and tenant (cached). */
  get(agentId: string): Promise<AgentRecord | null>;
  /** The agent the principal may address: invisible → 404, disabled → 403 AGENT_DISABLED (cached). */
  getFor(principal: Principal, agentId: string): Promise<AgentRecord>;
  /** The opened upstream secret or null; unopenable → 503. */
  upstreamSecret(agent: AgentRecord): string | null;
  /** Admin API shapes, straight from the database. */
  list(principal: Principal): Promise<Agent[]>;
  show(principal: Principal, agentId: string): Promise<Agent>;
  create(principal: Principal, input: NewAgentInput): Promise<{ agent: AgentSummary; runtimeToken: string }>;
  update(principal: Principal, agentId: string, patch: AgentPatch): Promise<Agent>;
  /** The kill switch's write side: publishes `agent.changed` so every replica refuses at once. */
  setActive(principal: Principal, agentId: string, active: boolean): Promise<Agent>;
  regenerateToken(principal: Principal, agentId: string): Promise<string>;
  delete(principal: Principal, agentId: string): Promise<void>;
}

/** Tool providers: cached routing reads with opened secrets, admin reads and writes. */
export interface ProviderCatalog {
  /** Providers visible to the principal, in routing order (cached). */
  visibleTo(principal: Principal): Promise<ProviderRecord[]>;
  /** Providers a call acting for the principal routes over: global + the tenant it acts in, admins included (cached). */
  routableFor(principal: Principal): Promise<ProviderRecord[]>;
  get(providerId: string): Promise<ProviderRecord | null>;
  /** The provider the principal may address; invisible or unknown → 404 (cached). */
  getFor(principal: Principal, providerId: string): Promise<ProviderRecord>;
  /** The provider that owns a tool name among `providers` (pattern, then priority). */
  route<P extends ProviderRecord>(toolName: string, providers: readonly P[]): P | null;
  /** The opened auth secret or null; unopenable → 503. */
  authSecret(provider: ProviderRecord): string | null;
  list(principal: Principal): Promise<ToolProvider[]>;
  show(principal: Principal, providerId: string): Promise<ToolProvider>;
  create(principal: Principal, input: NewToolProviderInput): Promise<ToolProvider>;
  update(principal: Principal, providerId: string, patch: ToolProviderPatch): Promise<ToolProvider>;
  delete(principal: Principal, providerId: string): Promise<void>;
}

/** Access rules: cached decisions for the hot path, admin reads, writes and the dry run. */
export interface RuleCatalog {
  /** The tool policy's decision, risk and matched rule (cached rules). */
  decide(input: DecisionInput): Promise<PolicyDecision<AccessRule>>;
  /** Provider-level access: does an allow-class rule of the agent name the provider or `*`? (cached rules) */
  providerAllowed(input: { agentId: string; tenantId: string | null; providerId: string }): Promise<boolean>;
  list(principal: Principal, filters: AccessRuleFilters): Promise<AccessRule[]>;
  show(principal: Principal, ruleId: string): Promise<AccessRule>;
  byProvider(principal: Principal, providerId: string): ReturnType<typeof accessRulesByProvider>;
  create(principal: Principal, input: NewAccessRuleInput): Promise<AccessRule>;
  update(principal: Principal, ruleId: string, patch: AccessRulePatch): Promise<AccessRule>;
  delete(principal: Principal, ruleId: string): Promise<void>;
  listForAgent(principal: Principal, agentId: string): Promise<AccessRule[]>;
  replaceForAgent(principal: Principal, agentId: string, rules: AgentRuleInput[]): Promise<AccessRule[]>;
  /** The admin dry run over the rules the principal can see (database, not cache). */
  evaluate(principal: Principal, input: EvaluationInput): Promise<PolicyDecision<AccessRule>>;
}

export interface Catalog {
  agents: AgentCatalog;
  providers: ProviderCatalog;
  rules: RuleCatalog;
  /** Subscribes the caches to `agent.changed`, `providers.changed`, `rules.changed`; until then every read queries. */
  start(): Promise<void>;
  /** Unsubscribes and empties the caches. */
  stop(): Promise<void>;
}

/** One home for agents, tool providers and access rules; see the package README for the contract. */
export function createCatalog(deps: CatalogDeps, options: CatalogOptions = {}): Catalog {
  const ctx: CatalogContext = { db: deps.db, bus: deps.bus, clock: deps.clock, logger: deps.logger, secrets: secretBoxFor(deps.config) };
  const ttlMs = options.ttlMs ?? 60_000;
  const agentDirectory = new AgentDirectory(ctx, options.agentTtlMs ?? 30_000);
  const providerDirectory = new ProviderDirectory(ctx, ttlMs);
  const ruleDirectory = new RuleDirectory(ctx, ttlMs);
  let unsubscribes: Unsubscribe[] = [];

  return {
    agents: {
      get: (id) => agentDirectory.get(id),
      getFor: (principal, id) => agentDirectory.getFor(principal, id),
      upstreamSecret: (agent) => agentDirectory.upstreamSecret(agent),
      list: (principal) => listAgents(ctx.db, principal),
      show: (principal, id) => getAgent(ctx.db, principal, id),
      create: (principal, input) => createAgent(ctx, principal, input),
      update: (principal, id, patch) => updateAgent(ctx, principal, id, patch),
      setActive: (principal, id, active) => setAgentActive(ctx, principal, id, active),
      regenerateToken: (principal, id) => regenerateRuntimeToken(ctx, principal, id),
      delete: (principal, id) => deleteAgent(ctx, principal, id),
    },
    providers: {
      visibleTo: (principal) => providerDirectory.visibleTo(principal),
      routableFor: (principal) => providerDirectory.routableFor(principal),
      get: (id) => providerDirectory.get(id),
      getFor: (principal, id) => providerDirectory.getFor(principal, id),
      route: (toolName, providers) => providerDirectory.route(toolName, providers),
      authSecret: (provider) => providerDirectory.authSecret(provider),
      list: (principal) => listToolProviders(ctx.db, principal),
      show: (principal, id) => getToolProvider(ctx.db, principal, id),
      create: (principal, input) => createToolProvider(ctx, principal, input),
      update: (principal, id, patch) => updateToolProvider(ctx, principal, id, patch),
      delete: (principal, id) => deleteToolProvider(ctx, principal, id),
    },
    rules: {
      decide: (input) => ruleDirectory.decide(input),
      providerAllowed: (input) => ruleDirectory.providerAllowed(input),
      list: (principal, filters) => listAccessRules(ctx.db, principal, filters),
      show: (principal, id) => getAccessRule(ctx.db, principal, id),
      byProvider: (principal, providerId) => accessRulesByProvider(ctx.db, principal, providerId),
      create: (principal, input) => createAccessRule(ctx, principal, input),
      update: (principal, id, patch) => updateAccessRule(ctx, principal, id, patch),
      delete: (principal, id) => deleteAccessRule(ctx, principal, id),
      listForAgent: (principal, agentId) => listAgentRules(ctx.db, principal, agentId),
      replaceForAgent: (principal, agentId, rules) => replaceAgentRules(ctx, principal, agentId, rules),
      evaluate: (principal, input) => evaluateAccess(ctx.db, principal, input),
    },
    async start() {
      if (unsubscribes.length > 0) return;
      unsubscribes = await Promise.all([agentDirectory.subscribe(), providerDirectory.subscribe(), ruleDirectory.subscribe()]);
    },
    async stop() {
      const current = unsubscribes;
      unsubscribes = [];
      await Promise.all(current.map((unsubscribe) => unsubscribe()));
    },
  };
}
