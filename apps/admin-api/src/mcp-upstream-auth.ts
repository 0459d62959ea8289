import { secretBoxFor, type Principal } from '@agentgw/auth';
import {
  assertTenantWritable,
  createCatalogAdmin,
  type NewToolProviderInput,
  type ToolProvider,
} from '@agentgw/catalog';
import { setUpMcpUpstreamAuth, type ManualUpstreamClient } from '@agentgw/credentials';
import { ValidationError } from '@agentgw/core';
import { randomBytes } from 'node:crypto';
import type { ServiceDeps } from '@agentgw/service-kit';
import {
  createCredentialProvider,
  credentialProviderForService,
  deleteCredentialProvider,
  updateCredentialProvider,
  type CredentialProvidersContext,
} from './credential-providers.js';

/**
 * A service type of its own for an `mcp_oauth` provider: `mcp_` + its name (lowercased, other
 * characters as `_`) + a random suffix, so two upstreams of one name never share users' tokens.
 */
export const mcpServiceTypeFor = (providerName: string): string => {
  const stem = providerName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 40);
  return `mcp_${stem ? `${stem}_` : ''}${randomBytes(4).toString('hex')}`;
};

/**
 * The `mcp_oauth` use cases (issue 22.5): discovery of the upstream's authorization and the
 * gateway's registration (or the admin's client), saved as the ordinary `oauth2` credential provider
 * of the tool provider's service type (client secret sealed, `resource` = the upstream URL), so each
 * user connects once through the vault's flow and calls carry their token as with `user_oauth`.
 */
export function createMcpUpstreamAuth(deps: ServiceDeps) {
  const { providers } = createCatalogAdmin(deps);
  const ctx: CredentialProvidersContext = { ...deps, secrets: secretBoxFor(deps.config) };

  /** Saves (creates or replaces) the credential provider of `serviceType` for the upstream at `endpoint`; the id it created, null when it replaced one. */
  async function saveCredentialProvider(
    principal: Principal,
    target: { name: string; endpoint: string; serviceType: string; tenantId: string | null | undefined },
    client: ManualUpstreamClient | null,
  ): Promise<string | null> {
    const setup = await setUpMcpUpstreamAuth(deps, {
      endpoint: target.endpoint,
      serviceType: target.serviceType,
      client,
    });
    const existing = await credentialProviderForService(deps.db, principal, target.serviceType).catch(() => null);
    // Its users' tokens were issued for the resource it names (RFC 8707): another upstream gets a service type of its own.
    const bound = existing?.config.resource;
    if (typeof bound === 'string' && bound !== setup.resource)
      throw new ValidationError(`credentialServiceType: ${target.serviceType} holds tokens issued for ${bound}`, {
        field: 'credentialServiceType',
        issues: [
          {
            field: 'credentialServiceType',
            message: `holds tokens issued for ${bound} (RFC 8707): omit it to give this upstream a service type of its own`,
          },
        ],
      });
    if (existing) {
      await updateCredentialProvider(ctx, principal, existing.id, { authType: 'oauth2', config: { ...setup } });
      return null;
    }
    const created = await createCredentialProvider(ctx, principal, {
      name: `${target.name} (MCP authorization)`,
      serviceType: target.serviceType,
      authType: 'oauth2',
      description: `Discovered from the MCP server ${target.endpoint}`,
      config: { ...setup },
      tenantId: target.tenantId,
    });
    return created.id;
  }

  return {
    /** Creates an `mcp_oauth` tool provider after discovery and registration succeeded (nothing is saved otherwise). */
    async create(
      principal: Principal,
      input: NewToolProviderInput & { upstreamClient?: ManualUpstreamClient },
    ): Promise<ToolProvider> {
      const { upstreamClient, ...fields } = input;
      const serviceType = fields.credentialServiceType ?? mcpServiceTypeFor(fields.name);
      const target = { name: fields.name, endpoint: fields.endpoint, serviceType, tenantId: fields.tenantId };
      const createdId = await saveCredentialProvider(principal, target, upstreamClient ?? null);
      try {
        return await providers.create(principal, {
          ...fields,
          authType: 'mcp_oauth',
          credentialServiceType: serviceType,
        });
      } catch (err) {
        if (createdId) await deleteCredentialProvider(ctx, principal, createdId);
        throw err;
      }
    },
    /** Runs discovery and registration again for an existing provider (or an admin's client), switching it to `mcp_oauth`. */
    async rediscover(
      principal: Principal,
      id: string,
      upstreamClient: ManualUpstreamClient | null,
    ): Promise<ToolProvider> {
      const current = await providers.show(principal, id);
      assertTenantWritable(principal, current.tenantId, 'tool provider');
      const { endpoint } = await providers.connection(principal, id);
      const serviceType =
        current.authType === 'mcp_oauth' && current.credentialServiceType
          ? current.credentialServiceType
          : mcpServiceTypeFor(current.name);
      await saveCredentialProvider(
        principal,
        { name: current.name, endpoint, serviceType, tenantId: current.tenantId },
        upstreamClient,
      );
      return providers.update(principal, id, { authType: 'mcp_oauth', credentialServiceType: serviceType });
    },
  };
}
