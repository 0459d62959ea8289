import { tenantScope, type Principal } from '@agentgw/auth';
import type { ProviderCatalog, ProviderRecord } from '@agentgw/catalog';
import { NotFoundError } from '@agentgw/core';

/**
 * The provider a proxy path addresses: by id (another tenant's only for an admin, as `getFor`
 * decides), else by name, unique among the caller's tenant's providers, then among the global
 * ones. An ambiguous or unknown name is the same 404 as an unknown id, so a name never reveals a
 * provider the caller may not use.
 */
export async function addressedProvider(
  providers: Pick<ProviderCatalog, 'getFor' | 'routableFor'>,
  principal: Principal,
  ref: string,
): Promise<ProviderRecord> {
  try {
    return await providers.getFor(principal, ref);
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  const scope = tenantScope(principal);
  const routable = await providers.routableFor(principal);
  // The caller's tenant first, then global: a tenant's name shadows a global one.
  for (const tier of scope === null ? [null] : [scope, null]) {
    const matches = routable.filter((p) => p.tenantId === tier && p.name === ref);
    if (matches.length === 1) return matches[0]!;
    if (matches.length > 1) break;
  }
  throw new NotFoundError('Tool provider');
}
