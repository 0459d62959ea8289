import type { Principal } from '@agentgw/auth';
import type { ProviderCatalog } from '@agentgw/catalog';
import type { UpstreamTool, UpstreamToolLister } from './upstream-tools.js';

/** The upstream's tool list, fetched live with the provider's opened credentials (404 for providers the principal cannot see). */
export async function fetchProviderTools(
  listUpstreamTools: UpstreamToolLister,
  providers: ProviderCatalog,
  principal: Principal,
  id: string,
  timeoutMs?: number,
): Promise<UpstreamTool[]> {
  const provider = await providers.getFor(principal, id);
  return listUpstreamTools({ endpoint: provider.endpoint, authType: provider.authType, secret: providers.authSecret(provider) }, timeoutMs);
}
