import { isVisibleTo, tenantScope, type Principal } from '@agentgw/auth';
import { compareRouting, NotFoundError, type Unsubscribe } from '@agentgw/core';
import type { ProviderAuthType, ProviderTokenExchangeSettings, ToolProviderRow } from '@agentgw/db';
import type { CatalogContext } from './catalog-context.js';
import { LiveCache } from './live-cache.js';
import { OpenedSecrets } from './sealed-secrets.js';

/** A provider as routing and forwarding need it. The auth secret stays sealed until asked for. */
export interface ProviderRecord {
  id: string;
  name: string;
  pattern: string;
  endpoint: string;
  authType: ProviderAuthType;
  /** With `user_oauth`/`user_key`: the service type of the calling user's credential each call carries. */
  credentialServiceType: string | null;
  /** With `token_exchange`: where the caller's sign-in token is exchanged (its client secret is the sealed auth secret). */
  tokenExchange: ProviderTokenExchangeSettings | null;
  priority: number;
  description: string | null;
  /** Prepended with `__` to its tools' exposed names; null: none. */
  namePrefix: string | null;
  tenantId: string | null;
  authSecretSealed: string | null;
}

const ALL = 'all';

/**
 * Every provider, loaded as one table in routing order (providers are few and every call routes
 * over all of them), cached in memory and dropped whole on `providers.changed`; each auth secret
 * is opened once per cached record.
 */
export class ProviderDirectory {
  private readonly cache: LiveCache<ProviderRecord[]>;
  private readonly secrets: OpenedSecrets<ProviderRecord>;

  constructor(
    private readonly ctx: CatalogContext,
    ttlMs: number,
  ) {
    this.cache = new LiveCache({ ttlMs, max: 1, clock: ctx.clock });
    this.secrets = new OpenedSecrets(ctx, 'provider', (provider) => ({
      id: provider.id,
      sealed: provider.authSecretSealed,
    }));
  }

  /** Subscribes to `providers.changed`; the reader's `start()` calls it. */
  subscribe(): Promise<Unsubscribe> {
    return this.cache.listen(this.ctx.bus, 'providers.changed', () => null);
  }

  /** The providers the principal may use (own tenant and global; admins all), in routing order. */
  async visibleTo(principal: Principal): Promise<ProviderRecord[]> {
    return (await this.table()).filter((p) => isVisibleTo(principal, p.tenantId));
  }

  /**
   * The providers a call acting for the principal routes over, in routing order: global ones and
   * those of the tenant it acts in (`tenantScope`). Admins too: seeing every tenant is for
   * administration; a call acts in one tenant, so another tenant's provider never claims its names.
   */
  async routableFor(principal: Principal): Promise<ProviderRecord[]> {
    const scope = tenantScope(principal);
    return (await this.table()).filter((p) => p.tenantId === null || p.tenantId === scope);
  }

  /** The provider or null, whatever its tenant. */
  async get(providerId: string): Promise<ProviderRecord | null> {
    return (await this.table()).find((p) => p.id === providerId) ?? null;
  }

  /** The provider as the principal may address it; another tenant's provider is 404 like an unknown id. */
  async getFor(principal: Principal, providerId: string): Promise<ProviderRecord> {
    const provider = await this.get(providerId);
    if (!provider || !isVisibleTo(principal, provider.tenantId)) throw new NotFoundError('Tool provider');
    return provider;
  }

  /** The plaintext auth secret (opened once per cached record), or null; unopenable → 503. */
  authSecret(provider: ProviderRecord): string | null {
    return this.secrets.of(provider);
  }

  private table(): Promise<ProviderRecord[]> {
    return this.cache.getOrLoad(ALL, async () => {
      const rows = await this.ctx.db.selectFrom('tool_providers').selectAll().execute();
      return rows.map(toProviderRecord).sort(compareRouting);
    });
  }
}

/** The read model of a row: `authSecretSealed` never leaves through the API shapes (`toToolProvider`). */
export function toProviderRecord(row: ToolProviderRow): ProviderRecord {
  return {
    id: row.id,
    name: row.name,
    pattern: row.pattern,
    endpoint: row.endpoint,
    authType: row.auth_type,
    credentialServiceType: row.credential_service_type,
    tokenExchange: row.token_exchange,
    priority: row.priority,
    description: row.description,
    namePrefix: row.name_prefix,
    tenantId: row.tenant_id,
    authSecretSealed: row.auth_secret_enc,
  };
}
