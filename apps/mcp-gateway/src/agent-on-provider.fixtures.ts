import type { GatewayUnderTest } from './gateway-under-test.js';
import { createRuleBoundAgent, type AgentRule } from './testing/rule-bound-agents.js';

/**
 * Registers `provider` (no auth, every tool name) and an agent whose one rule gives `action` on all
 * of its tools: the setup of a test about one upstream's calls under one rule.
 */
export async function createAgentOnProvider(
  gw: GatewayUnderTest,
  provider: { name: string; endpoint: string },
  agent: { name: string; action: AgentRule['action'] },
): Promise<{ providerId: string; runtimeToken: string }> {
  const { id: providerId } = await gw.catalog.providers.create(gw.admin, {
    ...provider,
    pattern: '*',
    authType: 'none',
    priority: 0,
  });
  const { runtimeToken } = await createRuleBoundAgent(gw, {
    name: agent.name,
    rules: [{ providerId, action: agent.action, toolPattern: '*' }],
  });
  return { providerId, runtimeToken };
}
