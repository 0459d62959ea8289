import type { NewAccessRuleInput, NewAgentInput } from '@agentgw/catalog';
import type { GatewayUnderTest } from '../gateway-under-test.js';

/** A rule a test gives its agent (the agent is the subject). */
export type AgentRule = Omit<NewAccessRuleInput, 'subjectType' | 'subjectId'>;

/** Every tool of every provider: the rule most gateway tests start from. */
export const ALLOW_EVERY_TOOL: AgentRule = { providerId: '*', action: 'allow', toolPattern: '*' };

/** An agent made by `createRuleBoundAgent`: its id, the runtime token it calls with, and its rules' ids in the order given. */
export interface RuleBoundAgent {
  agentId: string;
  runtimeToken: string;
  ruleIds: string[];
}

/**
 * Creates an agent whose own upstream is unreachable (only its runtime token matters to the gateway)
 * and gives it `rules`, each created in turn, so a test's calls are decided by exactly those rules.
 */
export async function createRuleBoundAgent(
  gw: GatewayUnderTest,
  options: { name?: string; toolSurface?: NewAgentInput['toolSurface']; rules?: AgentRule[] } = {},
): Promise<RuleBoundAgent> {
  const { catalog, admin } = gw;
  const { name = 'bot', toolSurface, rules = [ALLOW_EVERY_TOOL] } = options;
  const created = await catalog.agents.create(admin, {
    name,
    upstreamUrl: 'http://127.0.0.1:9/agent',
    ...(toolSurface && { toolSurface }),
  });
  const ruleIds: string[] = [];
  for (const rule of rules)
    ruleIds.push(
      (await catalog.rules.create(admin, { subjectType: 'agent', subjectId: created.agent.id, ...rule })).id,
    );
  return { agentId: created.agent.id, runtimeToken: created.runtimeToken, ruleIds };
}
