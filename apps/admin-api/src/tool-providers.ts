import { isWritableBy, type Principal } from '@agentgw/auth';
import type { ProviderAdmin, ToolProvider } from '@agentgw/catalog';
import { tokenExchangeView } from './token-exchange-settings.js';
import type { UpstreamTool, UpstreamToolLister } from './upstream-tools.js';

/** The upstream's tool list, fetched live with the provider's opened credentials (404 for providers the principal cannot see). */
export async function fetchProviderTools(
  listUpstreamTools: UpstreamToolLister,
  providers: Pick<ProviderAdmin, 'connection'>,
  principal: Principal,
  id: string,
  timeoutMs?: number,
): Promise<UpstreamTool[]> {
  return listUpstreamTools(await providers.connection(principal, id), timeoutMs);
}

/** A provider as one caller sees it: `endpoint` is null for callers who may not change the provider. */
export type ToolProviderView = Omit<ToolProvider, 'endpoint' | 'tokenExchange'> & {
  endpoint: string | null;
  tokenExchange: ReturnType<typeof tokenExchangeView>;
};

/**
 * SaaS MCP URLs often embed a key, so the endpoint is shown only to callers who may update the
 * provider (`provider:update` and the provider writable by them: admins any, tenant admins their
 * tenant's); everyone else, who can only list and read, gets `endpoint: null`.
 */
export function providerView(principal: Principal, provider: ToolProvider): ToolProviderView {
  const mayUpdate = principal.permissions.has('provider:update') && isWritableBy(principal, provider.tenantId);
  const shown = { ...provider, tokenExchange: tokenExchangeView(provider) };
  return mayUpdate ? shown : { ...shown, endpoint: null };
}
