import { GatewayApi } from '@agentgw/e2e/gateway-api';
import {
  ADMIN,
  startAllInOneUnderTest,
  startClusterUnderTest,
  startDistributedUnderTest,
  unavailable,
  type GatewayTarget,
  type TargetName,
} from '@agentgw/e2e/targets';

/** A gateway with one upstream registered: the MCP URLs of both endpoints and the agent token that reaches them. */
export interface GatewayUnderTest {
  target: GatewayTarget;
  token: string;
  /** The unified endpoint and the proxy endpoint of `providerId`, as paths on the gateway's base URL. */
  paths: { unified: string; proxy: string };
}

/** Starts a topology with e2e's own starters; null with the reason when it cannot run here. */
export async function startTopology(name: TargetName): Promise<GatewayTarget | string> {
  const reason = unavailable(name);
  if (reason) return reason;
  if (name === 'cluster') return startClusterUnderTest();
  return name === 'all-in-one' ? startAllInOneUnderTest() : startDistributedUnderTest();
}

/**
 * Registers `upstreamUrl` as a provider (pattern `*`), creates an agent allowed on it and returns
 * the agent's runtime token: the credential every endpoint accepts as a bearer.
 */
export async function registerUpstream(
  target: GatewayTarget,
  name: string,
  upstreamUrl: string,
): Promise<GatewayUnderTest> {
  const api = new GatewayApi(target.baseUrl);
  const { token: adminToken } = await api.login(ADMIN.email, ADMIN.password);
  const provider = await api.must(201, 'POST', '/api/v1/admin/tool-providers', {
    token: adminToken,
    body: { name, pattern: '*', endpoint: upstreamUrl },
  });
  const providerId = provider.provider.id as string;
  const created = await api.must(201, 'POST', '/api/v1/admin/agents', {
    token: adminToken,
    body: { name: `${name}-agent`, upstreamUrl: 'http://127.0.0.1:9/run' },
  });
  await api.must(201, 'POST', '/api/v1/admin/provider-access', {
    token: adminToken,
    body: { subjectType: 'agent', subjectId: created.agent.id, providerId, action: 'allow' },
  });
  return {
    target,
    token: created.runtime_token as string,
    paths: { unified: `/api/v1/mcp/mcp?providers=${providerId}`, proxy: `/api/v1/mcp-proxy/${providerId}/mcp` },
  };
}
