import type { Principal } from '@agentgw/auth';
import type { PolicyDecision } from '@agentgw/core';
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
  type AccessRule,
  type AccessRuleFilters,
  type AccessRulePatch,
  type AgentRuleInput,
  type EvaluationInput,
  type NewAccessRuleInput,
} from './access-rules.js';
import {
  createAgent,
  deleteAgent,
  getAgent,
  listAgents,
  regenerateRuntimeToken,
  setAgentActive,
  updateAgent,
  type Agent,
  type AgentPatch,
  type AgentSummary,
  type NewAgentInput,
} from './agents.js';
import { catalogContext, type CatalogDeps } from './catalog-context.js';
import {
  createToolProvider,
  deleteToolProvider,
  getToolProvider,
  listToolProviders,
  providerConnection,
  updateToolProvider,
  type NewToolProviderInput,
  type ProviderConnection,
  type ToolProvider,
  type ToolProviderPatch,
} from './tool-providers.js';

/** Agent administration: the admin API's shapes, straight from the database; each write publishes `agent.changed`. */
export interface AgentAdmin {
  list(principal: Principal): Promise<Agent[]>;
  show(principal: Principal, agentId: string): Promise<Agent>;
  create(principal: Principal, input: NewAgentInput): Promise<{ agent: AgentSummary; runtimeToken: string }>;
  update(principal: Principal, agentId: string, patch: AgentPatch): Promise<Agent>;
  /** The kill switch's write side: publishes `agent.changed` so every replica refuses at once. */
  setActive(principal: Principal, agentId: string, active: boolean): Promise<Agent>;
  regenerateToken(principal: Principal, agentId: string): Promise<string>;
  delete(principal: Principal, agentId: string): Promise<void>;
}

/** Tool provider administration; each write publishes `providers.changed`. */
export interface ProviderAdmin {
  list(principal: Principal): Promise<ToolProvider[]>;
  show(principal: Principal, providerId: string): Promise<ToolProvider>;
  /** Endpoint, auth type and opened secret of a visible provider (404 otherwise), for a live call from the admin API. */
  connection(principal: Principal, providerId: string): Promise<ProviderConnection>;
  create(principal: Principal, input: NewToolProviderInput): Promise<ToolProvider>;
  update(principal: Principal, providerId: string, patch: ToolProviderPatch): Promise<ToolProvider>;
  delete(principal: Principal, providerId: string): Promise<void>;
}

/** Access rule administration and the dry run; each write publishes `rules.changed`. */
export interface RuleAdmin {
  list(principal: Principal, filters: AccessRuleFilters): Promise<AccessRule[]>;
  show(principal: Principal, ruleId: string): Promise<AccessRule>;
  byProvider(principal: Principal, providerId: string): ReturnType<typeof accessRulesByProvider>;
  create(principal: Principal, input: NewAccessRuleInput): Promise<AccessRule>;
  update(principal: Principal, ruleId: string, patch: AccessRulePatch): Promise<AccessRule>;
  delete(principal: Principal, ruleId: string): Promise<void>;
  listForAgent(principal: Principal, agentId: string): Promise<AccessRule[]>;
  replaceForAgent(principal: Principal, agentId: string, rules: AgentRuleInput[]): Promise<AccessRule[]>;
  /** The admin dry run over the rules the principal can see. */
  evaluate(principal: Principal, input: EvaluationInput): Promise<PolicyDecision<AccessRule>>;
}

/** The catalog's writes and listings: plain database functions under the admin API's tenant rules, no cache to start. */
export interface CatalogAdmin {
  agents: AgentAdmin;
  providers: ProviderAdmin;
  rules: RuleAdmin;
}

/** The catalog's admin side over the given deps (admin-api, test set-up). */
export function createCatalogAdmin(deps: CatalogDeps): CatalogAdmin {
  const ctx = catalogContext(deps);
  return {
    agents: {
      list: (principal) => listAgents(ctx.db, principal),
      show: (principal, id) => getAgent(ctx.db, principal, id),
      create: (principal, input) => createAgent(ctx, principal, input),
      update: (principal, id, patch) => updateAgent(ctx, principal, id, patch),
      setActive: (principal, id, active) => setAgentActive(ctx, principal, id, active),
      regenerateToken: (principal, id) => regenerateRuntimeToken(ctx, principal, id),
      delete: (principal, id) => deleteAgent(ctx, principal, id),
    },
    providers: {
      list: (principal) => listToolProviders(ctx.db, principal),
      show: (principal, id) => getToolProvider(ctx.db, principal, id),
      connection: (principal, id) => providerConnection(ctx, principal, id),
      create: (principal, input) => createToolProvider(ctx, principal, input),
      update: (principal, id, patch) => updateToolProvider(ctx, principal, id, patch),
      delete: (principal, id) => deleteToolProvider(ctx, principal, id),
    },
    rules: {
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
  };
}
