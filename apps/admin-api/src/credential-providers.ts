import { tenantScope, whereTenantVisible, writeTenant, type Principal, type SecretBox } from '@agentgw/auth';
import { ConflictError, NotFoundError, newId, validationErrorFrom, type Clock } from '@agentgw/core';
import { json, type CredentialAuthType, type CredentialProviderRow, type Database } from '@agentgw/db';
import { z } from '@hono/zod-openapi';
import { sql, type Kysely } from 'kysely';
import { assertTenantWritable, invalidField } from '@agentgw/catalog';
import { HttpUrl } from '@agentgw/service-kit';
import { conflictOnUnique } from './unique-conflict.js';

/** What every read shows instead of a secret, and what an update sends to keep the stored one. */
export const SECRET_MASK = '********';

/** Config keys holding secrets (at any depth): masked on read, sealed at rest. */
const SECRET_KEY = /secret|password|passphrase|(token|api_?key|private_?key)$/i;

const connectUrl = HttpUrl.optional().openapi({
  description: 'Where a user connects this credential (used for authUrls)',
});

/** `config` per authType. Unknown keys are kept (secret-named ones are sealed and masked too). */
export const credentialConfigSchemas = {
  oauth2: z
    .looseObject({
      clientId: z.string().min(1),
      clientSecret: z
        .string()
        .min(1)
        .optional()
        .openapi({ description: 'Masked as ******** on read; required unless clientAuthMethod is none' }),
      scopes: z.array(z.string().min(1)).default([]),
      issuer: HttpUrl.optional().openapi({
        description:
          "The authorization server's issuer: its endpoints are discovered (OpenID Connect / RFC 8414 metadata). Or give authorizeUrl and tokenUrl",
      }),
      authorizeUrl: HttpUrl.optional(),
      tokenUrl: HttpUrl.optional(),
      revocationUrl: HttpUrl.optional().openapi({
        description: 'RFC 7009 revocation endpoint (with explicit endpoints; discovery finds it otherwise)',
      }),
      clientAuthMethod: z.enum(['client_secret_basic', 'client_secret_post', 'none']).optional().openapi({
        description:
          'How the client authenticates at the token endpoint (default client_secret_basic; none: a public client, PKCE only)',
      }),
      clientRegistration: z.enum(['client_id_metadata_document', 'dynamic_registration', 'manual']).optional().openapi({
        description:
          "How an mcp_oauth provider's client was obtained: the gateway's client ID metadata document as client_id, RFC 7591 registration, or entered by an admin",
      }),
      authorizationParams: z
        .record(z.string().min(1).max(100), z.string().max(2000))
        .refine((params) => Object.keys(params).length <= 20, 'at most 20 parameters')
        .optional()
        .openapi({
          description:
            'Extra authorization request parameters (e.g. prompt, access_type); the flow sets client_id, redirect_uri, response_type, scope, state, PKCE and resource itself',
        }),
      resource: HttpUrl.optional().openapi({
        description: 'RFC 8707 resource indicator sent in the authorization and token requests',
      }),
      connectUrl,
    })
    .refine((c) => c.clientSecret !== undefined || c.clientAuthMethod === 'none', {
      message: 'required unless clientAuthMethod is none',
      path: ['clientSecret'],
    })
    .openapi('OAuth2CredentialConfig'),
  jwt: z
    .looseObject({
      connectUrl,
      jwt: z
        .object({ headerName: z.string().min(1).max(200), prefix: z.string().max(200).optional() })
        .optional()
        .openapi({
          description: 'How the token is sent upstream, e.g. { headerName: "Authorization", prefix: "Bearer " }',
        }),
    })
    .openapi('JwtCredentialConfig'),
  api_key: z.looseObject({ connectUrl }).openapi('ApiKeyCredentialConfig'),
  basic: z.looseObject({ connectUrl }).openapi('BasicCredentialConfig'),
} satisfies Record<CredentialAuthType, z.ZodType<Record<string, unknown>>>;

type Config = Record<string, unknown>;

export interface CredentialProvider {
  id: string;
  name: string;
  serviceType: string;
  authType: CredentialAuthType;
  description: string | null;
  config: Config;
  tenantId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewCredentialProviderInput {
  name: string;
  serviceType: string;
  authType: CredentialAuthType;
  description?: string | null;
  config?: Config;
  tenantId?: string | null;
}

/** Absent fields stay. A new authType revalidates the (new or stored) config against it. */
export type CredentialProviderPatch = Partial<Omit<NewCredentialProviderInput, 'tenantId'>>;

export interface CredentialProvidersContext {
  db: Kysely<Database>;
  clock: Clock;
  /** Seals secret-named config values at rest, bound to the credential provider id. */
  secrets: SecretBox;
}

export function toCredentialProvider(row: CredentialProviderRow): CredentialProvider {
  return {
    id: row.id,
    name: row.name,
    serviceType: row.service_type,
    authType: row.auth_type,
    description: row.description,
    config: maskSecrets(row.config) as Config,
    tenantId: row.tenant_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function listCredentialProviders(
  db: Kysely<Database>,
  principal: Principal,
): Promise<CredentialProvider[]> {
  const rows = await visible(db, principal).orderBy('service_type').orderBy('created_at').orderBy('id').execute();
  return rows.map(toCredentialProvider);
}

export async function getCredentialProvider(
  db: Kysely<Database>,
  principal: Principal,
  id: string,
): Promise<CredentialProvider> {
  return toCredentialProvider(await loadVisible(db, principal, id));
}

/** The provider for a service type as the caller's scope (`tenantScope`) sees it: its own first, else the global one. */
export async function credentialProviderForService(
  db: Kysely<Database>,
  principal: Principal,
  serviceType: string,
): Promise<CredentialProvider> {
  const scope = tenantScope(principal);
  const row = await db
    .selectFrom('credential_providers')
    .selectAll()
    .where('service_type', '=', serviceType)
    .where((eb) =>
      scope === null ? eb('tenant_id', 'is', null) : eb.or([eb('tenant_id', '=', scope), eb('tenant_id', 'is', null)]),
    )
    .orderBy(sql`tenant_id is null`)
    .executeTakeFirst();
  if (!row) throw new NotFoundError('Credential provider');
  return toCredentialProvider(row);
}

export async function createCredentialProvider(
  ctx: CredentialProvidersContext,
  principal: Principal,
  input: NewCredentialProviderInput,
): Promise<CredentialProvider> {
  const tenantId = writeTenant(principal, input.tenantId);
  const id = newId();
  const config = sealSecrets(ctx.secrets, id, validateConfig(input.authType, input.config ?? {}), {});
  await assertServiceTypeFree(ctx.db, tenantId, input.serviceType, null);
  const now = ctx.clock.now();
  const row = await conflictOnUnique(
    () =>
      ctx.db
        .insertInto('credential_providers')
        .values({
          id,
          name: input.name,
          service_type: input.serviceType,
          auth_type: input.authType,
          description: input.description ?? null,
          config: json(config),
          tenant_id: tenantId,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    serviceTypeTaken,
  );
  return toCredentialProvider(row);
}

/** Updates; inside `config`, a secret sent as `********` keeps the stored value. */
export async function updateCredentialProvider(
  ctx: CredentialProvidersContext,
  principal: Principal,
  id: string,
  patch: CredentialProviderPatch,
): Promise<CredentialProvider> {
  const current = await loadVisible(ctx.db, principal, id);
  assertTenantWritable(principal, current.tenant_id, 'credential provider');
  const authType = patch.authType ?? current.auth_type;
  let config: Config | undefined;
  if (patch.config !== undefined)
    config = sealSecrets(ctx.secrets, id, validateConfig(authType, patch.config), current.config);
  else if (patch.authType !== undefined) validateConfig(authType, current.config);
  if (patch.serviceType !== undefined && patch.serviceType !== current.service_type) {
    await assertServiceTypeFree(ctx.db, current.tenant_id, patch.serviceType, id);
  }
  const row = await conflictOnUnique(
    () =>
      ctx.db
        .updateTable('credential_providers')
        .set({
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.serviceType !== undefined && { service_type: patch.serviceType }),
          ...(patch.authType !== undefined && { auth_type: patch.authType }),
          ...(patch.description !== undefined && { description: patch.description }),
          ...(config !== undefined && { config: json(config) }),
          updated_at: ctx.clock.now(),
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),
    serviceTypeTaken,
  );
  if (!row) throw new NotFoundError('Credential provider');
  return toCredentialProvider(row);
}

export async function deleteCredentialProvider(
  ctx: CredentialProvidersContext,
  principal: Principal,
  id: string,
): Promise<void> {
  const current = await loadVisible(ctx.db, principal, id);
  assertTenantWritable(principal, current.tenant_id, 'credential provider');
  await ctx.db.deleteFrom('credential_providers').where('id', '=', id).execute();
}

/** Checks `config` against its authType's schema; failures are 400s naming `config.<field>`. */
function validateConfig(authType: CredentialAuthType, config: Config): Config {
  const result = z.object({ config: credentialConfigSchemas[authType] }).safeParse({ config });
  if (!result.success) throw validationErrorFrom(result.error);
  return result.data.config;
}

/** Copy of `value` with every secret-named entry replaced by the mask. */
function maskSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key, SECRET_KEY.test(key) && v !== null ? SECRET_MASK : maskSecrets(v)]),
  );
}

/**
 * Seals every secret-named string, and puts the stored (already sealed) value back where the
 * request sent the mask. A mask with nothing stored behind it, or a non-string secret, is a 400.
 */
function sealSecrets(box: SecretBox, id: string, incoming: Config, stored: unknown): Config {
  const walk = (value: unknown, previous: unknown, path: string): unknown => {
    if (Array.isArray(value))
      return value.map((v, i) => walk(v, Array.isArray(previous) ? previous[i] : undefined, `${path}.${i}`));
    if (value === null || typeof value !== 'object') return value;
    const before = previous !== null && typeof previous === 'object' ? (previous as Config) : {};
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => {
        const field = `${path}.${key}`;
        if (!SECRET_KEY.test(key) || v === null) return [key, walk(v, before[key], field)];
        if (typeof v !== 'string') throw invalidField(field, 'a secret must be a string');
        if (v !== SECRET_MASK) return [key, box.seal(v, id)];
        if (typeof before[key] !== 'string')
          throw invalidField(field, `${SECRET_MASK} keeps a stored secret, but none is stored`);
        return [key, before[key]];
      }),
    );
  };
  return walk(incoming, stored, 'config') as Config;
}

/** One provider per (tenant, serviceType); global ones count as their own tenant. */
async function assertServiceTypeFree(
  db: Kysely<Database>,
  tenantId: string | null,
  serviceType: string,
  exceptId: string | null,
): Promise<void> {
  const taken = await db
    .selectFrom('credential_providers')
    .select('id')
    .where('service_type', '=', serviceType)
    .where((eb) => (tenantId === null ? eb('tenant_id', 'is', null) : eb('tenant_id', '=', tenantId)))
    .$if(exceptId !== null, (qb) => qb.where('id', '!=', exceptId!))
    .executeTakeFirst();
  if (taken) throw serviceTypeTaken();
}

function visible(db: Kysely<Database>, principal: Principal) {
  return db
    .selectFrom('credential_providers')
    .selectAll()
    .where((eb) => whereTenantVisible(eb, principal, 'credential_providers.tenant_id'));
}

async function loadVisible(db: Kysely<Database>, principal: Principal, id: string): Promise<CredentialProviderRow> {
  const row = await visible(db, principal).where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('Credential provider');
  return row;
}

const serviceTypeTaken = (): ConflictError =>
  new ConflictError('A credential provider for this service type already exists in this tenant', 'SERVICE_TYPE_TAKEN');
