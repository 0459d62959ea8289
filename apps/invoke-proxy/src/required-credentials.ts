import { CredentialsRequiredError } from '@agentgw/core';
import type { CredentialResolver } from '@agentgw/credentials';
import type { AgentRecord } from '@agentgw/catalog';

/**
 * The agent's required credentials for one user, by service type. Any missing one fails the
 * whole call with 401 CREDENTIALS_REQUIRED carrying every missing type and its connect URL.
 */
export async function resolveRequiredCredentials(
  resolver: CredentialResolver,
  agent: AgentRecord,
  user: { userId: string; tenantId: string | null },
): Promise<Record<string, string>> {
  if (agent.requiredCredentials.length === 0) return {};
  const serviceTypes = [...new Set(agent.requiredCredentials.map((c) => c.serviceType))];
  const resolution = await resolver.resolve({
    userId: user.userId,
    tenantId: user.tenantId,
    serviceTypes,
    recipient: { kind: 'agent', tenantId: agent.tenantId, endpoint: agent.upstreamUrl },
  });
  const missing = serviceTypes.filter((t) => resolution.missing.includes(t) || resolution.credentials[t] === undefined);
  if (missing.length > 0) {
    const authUrls: Record<string, string> = {};
    for (const t of missing) {
      const url = resolution.authUrls[t];
      if (url !== undefined) authUrls[t] = url;
    }
    throw new CredentialsRequiredError(missing, authUrls);
  }
  // Only what the agent declared travels upstream, whatever else the resolver returned.
  return Object.fromEntries(serviceTypes.map((t) => [t, resolution.credentials[t] as string]));
}
