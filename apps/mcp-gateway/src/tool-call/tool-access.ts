import { actingUserOf, assertAgentActive, tenantScope, type Principal } from '@agentgw/auth';
import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import { ForbiddenError } from '@agentgw/core';

/** The catalog reads a tool call is decided with (all cached; the tests give in-memory fakes). */
export interface ToolCallCatalog {
  agents: Pick<Catalog['agents'], 'get'>;
  providers: Pick<Catalog['providers'], 'routableFor' | 'visibleTo' | 'getFor'>;
  rules: Pick<Catalog['rules'], 'decide' | 'providerAllowed'>;
}

/** The refusal of a tool name the provider's pattern does not claim (proxy and tool gate). */
export const OUTSIDE_PATTERN = "The tool name is outside the provider's pattern";
/** The refusal of an agent without an allow-class rule naming the provider. */
export const NO_PROVIDER_ACCESS = 'The agent has no access to this provider';

/**
 * The kill switch: the acting agent must exist and be enabled (403 AGENT_DISABLED otherwise).
 * Returns whether it wants every call confirmed; false when no agent acts.
 */
export async function agentStanding(
  catalog: ToolCallCatalog,
  principal: Principal,
): Promise<{ alwaysConfirm: boolean }> {
  if (principal.agentId === null) return NO_AGENT;
  // The same cached record auth checked (one reader per process), under the one rule; deleted counts as disabled.
  const agent = await catalog.agents.get(principal.agentId);
  if (!agent) throw new ForbiddenError('Agent is disabled', 'AGENT_DISABLED');
  assertAgentActive(agent);
  return agent.requireConfirmation ? ALWAYS_CONFIRM : NO_AGENT;
}

const NO_AGENT = Object.freeze({ alwaysConfirm: false });
const ALWAYS_CONFIRM = Object.freeze({ alwaysConfirm: true });

/**
 * Providers a tool name may route to: global and the acting tenant's (an admin's calls too), or
 * exactly those `providers=` names among the ones the caller may address (an admin may name
 * another tenant's provider explicitly; anyone else never sees it).
 */
export function routingSet(
  catalog: ToolCallCatalog,
  principal: Principal,
  filter: readonly string[] | null,
): Promise<ProviderRecord[]> {
  return filter === null ? catalog.providers.routableFor(principal) : namedProviders(catalog, principal, filter);
}

async function namedProviders(
  catalog: ToolCallCatalog,
  principal: Principal,
  filter: readonly string[],
): Promise<ProviderRecord[]> {
  return (await catalog.providers.visibleTo(principal)).filter((p) => filter.includes(p.id));
}

/** Provider-level access: an agent needs an allow-class rule naming the provider (or `*`); a user alone is decided per tool. */
export function mayReach(catalog: ToolCallCatalog, principal: Principal, providerId: string): Promise<boolean> {
  if (principal.agentId === null) return REACHABLE;
  return catalog.rules.providerAllowed({ agentId: principal.agentId, tenantId: tenantScope(principal), providerId });
}

const REACHABLE = Promise.resolve(true);

/** The policy's answer for one tool. */
export type ToolPolicy = Awaited<ReturnType<ToolCallCatalog['rules']['decide']>>;

/** The tool policy, decided as the real end user (else the user) in the tenant the call acts in. */
export function toolPolicy(
  catalog: ToolCallCatalog,
  principal: Principal,
  providerId: string,
  toolName: string,
): Promise<ToolPolicy> {
  return catalog.rules.decide({
    agentId: principal.agentId,
    userId: actingUserOf(principal),
    tenantId: tenantScope(principal),
    providerId,
    toolName,
  });
}

/** Why the policy denied: a rule said so, or nothing allowed it (default deny). */
export const denialReason = (decision: ToolPolicy): string =>
  decision.matchedRule ? 'Denied by an access rule' : 'No access rule allows this tool';
