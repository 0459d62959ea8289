import { recordIdentityEvent } from '@agentgw/audit';
import { privateScope } from '@agentgw/auth';
import {
  ForbiddenError,
  MemoryCache,
  newId,
  NotFoundError,
  ValidationError,
  type Clock,
  type Config,
  type CredentialStatus,
  type EventBus,
  type Logger,
} from '@agentgw/core';
import { json, type CredentialKind, type Database, type UserCredentialRow } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { authUrlFor, authUrlsOf, findCredentialProviders } from './auth-urls.js';
import { dependsOnGoverning, mayRelease, type CredentialRecipient } from './credential-recipients.js';
import { createCredentialKeyring, type CredentialBinding, type CredentialKeyring } from './credential-keyring.js';
import type { TokenSet } from './oauth/oauth-client.js';
import type { VaultOAuth } from './oauth/vault-oauth.js';
import {
  connectedAccountEvent,
  freshOAuthRow,
  oauthColumns,
  openOAuthRow,
  revokeOAuthRow,
  type OAuthCredentialsContext,
} from './oauth/oauth-credentials.js';
import { isOAuthRow, oauthMetadataOf } from './oauth/oauth-tokens.js';

/** What the vault needs from a service's deps (a `ServiceDeps` fits). */
export interface VaultDeps {
  config: Config;
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  /**
   * With a bus, a user's sealed rows are cached (see `SEALED_ROWS_TTL_MS`), dropped on
   * `credential.changed`/`user.changed`, and this vault's writes publish `credential.changed`.
   */
  bus?: EventBus;
  /** OAuth connections: refresh before expiry and revocation on delete. Without it, OAuth rows are served until they expire. */
  oauth?: VaultOAuth;
}

/** What the API shows about a stored credential; never the secret. */
export interface CredentialMetadata {
  id: string;
  serviceType: string;
  kind: CredentialKind;
  /** `needs_reconnect`: the server refused the refresh (or the token was revoked); `expired`: past expiresAt with nothing to refresh it. */
  status: CredentialStatus;
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface StoreCredentialInput {
  userId: string;
  tenantId: string | null;
  serviceType: string;
  kind: Extract<CredentialKind, 'jwt' | 'api_key'>;
  secret: string;
  expiresAt: Date | null;
}

/** Tokens an OAuth connection obtained, for the user and the provider it was started with. */
export interface StoreOAuthInput {
  userId: string;
  tenantId: string | null;
  serviceType: string;
  providerId: string;
  tokens: TokenSet;
}

export type CheckResult =
  { hasCredential: true; credential: CredentialMetadata } | { hasCredential: false; authUrl: string };

export interface ReencryptReport {
  /** Rows now sealed under the current key. */
  reencrypted: number;
  /** Rows no configured key opens (wrong key, tampered): left as they are. */
  unreadable: number;
}

/** The plaintext credentials found, the service types missing, and where to connect each missing one. */
export interface CredentialResolution {
  credentials: Record<string, string>;
  missing: string[];
  authUrls: Record<string, string>;
}

/** Users' credentials: stored sealed, listed as metadata, resolved in plaintext for invokes. */
export interface Vault {
  list(userId: string): Promise<CredentialMetadata[]>;
  store(input: StoreCredentialInput): Promise<CredentialMetadata>;
  /** Seals an OAuth connection's tokens (replacing any credential of that service type). */
  storeOAuth(input: StoreOAuthInput): Promise<CredentialMetadata>;
  /** Deletes the user's own credential (an OAuth one is revoked at its server first, where supported); another user's id is indistinguishable from an unknown one. */
  remove(userId: string, id: string): Promise<void>;
  /** The user's usable credentials that may go to `recipient` (`mayRelease`); the others are missing, with where to connect them. */
  resolve(input: {
    userId: string;
    tenantId: string | null;
    serviceTypes: string[];
    recipient: CredentialRecipient;
  }): Promise<CredentialResolution>;
  check(input: { userId: string; tenantId: string | null; serviceType: string }): Promise<CheckResult>;
  reencryptAll(): Promise<ReencryptReport>;
}

function statusOf(row: UserCredentialRow, now: Date): CredentialStatus {
  const oauth = isOAuthRow(row) ? oauthMetadataOf(row) : null;
  if (oauth?.status === 'needs_reconnect') return 'needs_reconnect';
  const expired = row.expires_at !== null && new Date(row.expires_at).getTime() <= now.getTime();
  return expired && !oauth?.refreshable ? 'expired' : 'connected';
}

const toMetadata = (row: UserCredentialRow, now: Date): CredentialMetadata => ({
  id: row.id,
  serviceType: row.service_type,
  kind: row.kind,
  status: statusOf(row, now),
  expiresAt: row.expires_at ? new Date(row.expires_at).toISOString() : null,
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
});

const bindingOf = (row: UserCredentialRow): CredentialBinding => ({
  userId: row.user_id,
  serviceType: row.service_type,
  kind: row.kind,
});

const REENCRYPT_BATCH = 200;

/**
 * How long a user's sealed credential rows may be served from memory without an event. Only the
 * rows as stored (ciphertext, nonce, key id, expiry) are cached; plaintext is opened per resolve
 * and never kept or written anywhere.
 */
export const SEALED_ROWS_TTL_MS = 30_000;

/** The vault over the database; the only code that opens user credentials. */
export function createVault(deps: VaultDeps): Vault {
  const { db, config, clock, logger } = deps;
  const keyring: CredentialKeyring = createCredentialKeyring(config);

  /** The plaintext of a usable credential (an OAuth one's access token), or null when it is expired, needs reconnecting or cannot be decrypted. */
  function usableValue(row: UserCredentialRow): string | null {
    if (statusOf(row, clock.now()) !== 'connected') return null;
    if (row.expires_at && new Date(row.expires_at).getTime() <= clock.now().getTime()) return null;
    if (isOAuthRow(row)) return openOAuthRow({ keyring, logger }, row)?.accessToken ?? null;
    const opened = keyring.open(bindingOf(row), { ciphertext: row.ciphertext, nonce: row.nonce, keyId: row.key_id });
    if (opened.ok) return opened.value;
    logger.warn(
      {
        credentialId: row.id,
        userId: row.user_id,
        serviceType: row.service_type,
        keyId: row.key_id,
        reason: opened.reason,
      },
      'stored credential cannot be decrypted; treating it as missing',
    );
    return null;
  }

  const rowsFor = (userId: string, serviceTypes: readonly string[]) =>
    serviceTypes.length === 0
      ? Promise.resolve([])
      : db
          .selectFrom('user_credentials')
          .selectAll()
          .where('user_id', '=', userId)
          .where('service_type', 'in', serviceTypes)
          .execute();

  // The invoke hot path: every sealed row of a user (a handful), kept until an event or the TTL.
  const { bus } = deps;
  const sealedRows = new MemoryCache<UserCredentialRow[]>({ ttlMs: SEALED_ROWS_TTL_MS, max: 10_000, clock });
  let subscribed: Promise<unknown> | null = null;
  async function cachedRowsFor(userId: string, serviceTypes: readonly string[]): Promise<UserCredentialRow[]> {
    if (!bus) return rowsFor(userId, serviceTypes);
    subscribed ??= Promise.all([
      sealedRows.invalidateOn(bus, 'credential.changed', ({ userId: changed }) => changed),
      sealedRows.invalidateOn(bus, 'user.changed', ({ userId: changed }) => changed),
    ]);
    await subscribed;
    const rows = await sealedRows.getOrLoad(userId, () =>
      db.selectFrom('user_credentials').selectAll().where('user_id', '=', userId).execute(),
    );
    return rows.filter((row) => serviceTypes.includes(row.service_type));
  }
  const changed = async (userId: string) => {
    sealedRows.delete(userId);
    await bus?.publish('credential.changed', { userId });
  };

  const oauthCtx: OAuthCredentialsContext | null = deps.oauth
    ? { db, clock, logger, keyring, oauth: deps.oauth, changed }
    : null;
  /** The row with its OAuth access token refreshed when due (no-op without OAuth deps or for other kinds). */
  const fresh = (row: UserCredentialRow): Promise<UserCredentialRow> =>
    oauthCtx ? freshOAuthRow(oauthCtx, row) : Promise.resolve(row);

  /** Inserts or replaces the user's credential of a service type; the user must have an account here. */
  async function upsert(
    input: { userId: string; tenantId: string | null; serviceType: string; kind: CredentialKind },
    columns: Pick<UserCredentialRow, 'ciphertext' | 'nonce' | 'key_id'> & { metadata: string; expires_at: Date | null },
  ): Promise<CredentialMetadata> {
    const now = clock.now();
    // External-issuer users may have no account here; credentials hang off an account (FK, cascade on delete).
    const user = await db.selectFrom('users').select('id').where('id', '=', input.userId).executeTakeFirst();
    if (!user)
      throw new ForbiddenError(
        'Credentials can only be stored for users registered with the gateway',
        'USER_NOT_REGISTERED',
      );
    const values = { tenant_id: input.tenantId, kind: input.kind, ...columns, updated_at: now };
    const row = await db
      .insertInto('user_credentials')
      .values({ id: newId(), user_id: input.userId, service_type: input.serviceType, created_at: now, ...values })
      .onConflict((oc) => oc.columns(['user_id', 'service_type']).doUpdateSet(values))
      .returningAll()
      .executeTakeFirstOrThrow();
    await changed(input.userId);
    return toMetadata(row, now);
  }

  return {
    async list(userId) {
      const rows = await db
        .selectFrom('user_credentials')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('service_type')
        .execute();
      const now = clock.now();
      return rows.map((row) => toMetadata(row, now));
    },

    async store(input) {
      if (input.expiresAt && input.expiresAt.getTime() <= clock.now().getTime()) {
        throw new ValidationError('expiresAt: must be in the future', { field: 'expiresAt' });
      }
      const sealed = keyring.seal(
        { userId: input.userId, serviceType: input.serviceType, kind: input.kind },
        input.secret,
      );
      return upsert(input, {
        ciphertext: sealed.ciphertext,
        nonce: sealed.nonce,
        key_id: sealed.keyId,
        metadata: json({}),
        expires_at: input.expiresAt,
      });
    },

    async storeOAuth({ tokens, providerId, ...input }) {
      const binding = { userId: input.userId, serviceType: input.serviceType, kind: 'oauth2' as const };
      const meta = {
        providerId,
        refreshable: tokens.refreshToken !== null,
        status: 'connected' as const,
        scope: tokens.scope,
      };
      return upsert(
        { ...input, kind: 'oauth2' },
        oauthColumns(
          keyring,
          binding,
          { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken },
          tokens.expiresAt,
          meta,
        ),
      );
    },

    async remove(userId, id) {
      const row = await db
        .selectFrom('user_credentials')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (!row) throw new NotFoundError('Credential');
      if (oauthCtx && isOAuthRow(row)) await revokeOAuthRow(oauthCtx, row);
      await db.deleteFrom('user_credentials').where('id', '=', id).where('user_id', '=', userId).execute();
      await changed(userId);
      if (isOAuthRow(row))
        await recordIdentityEvent(db, {
          ...connectedAccountEvent(row),
          type: 'connected_account.disconnected',
          actorId: userId,
        });
    },

    async resolve({ userId, tenantId, serviceTypes, recipient }) {
      const wanted = [...new Set(serviceTypes)];
      const rows = await Promise.all((await cachedRowsFor(userId, wanted)).map(fresh));
      // Which credential provider governs each type decides what an upstream may receive of an
      // OAuth token (and anything for a tenant's tool provider); the owner's own read, and an
      // invoke of pasted keys with nothing missing, need no other lookup.
      const providers = rows.some((row) => dependsOnGoverning(row, recipient))
        ? await findCredentialProviders(db, tenantId, wanted)
        : null;
      const credentials: Record<string, string> = {};
      for (const row of rows) {
        const value = usableValue(row);
        const governing = providers?.get(row.service_type);
        if (value !== null && mayRelease({ row, userScope: tenantId ?? privateScope(userId), governing, recipient }))
          credentials[row.service_type] = value;
      }
      const missing = wanted.filter((t) => !(t in credentials));
      if (missing.length === 0) return { credentials, missing, authUrls: {} };
      const authUrls = authUrlsOf(config, missing, providers ?? (await findCredentialProviders(db, tenantId, missing)));
      return { credentials, missing, authUrls };
    },

    async check({ userId, tenantId, serviceType }) {
      const [stored] = await rowsFor(userId, [serviceType]);
      const row = stored && (await fresh(stored));
      if (row && usableValue(row) !== null) return { hasCredential: true, credential: toMetadata(row, clock.now()) };
      const providers = await findCredentialProviders(db, tenantId, [serviceType]);
      return { hasCredential: false, authUrl: authUrlFor(config, serviceType, providers.get(serviceType)) };
    },

    async reencryptAll() {
      const report: ReencryptReport = { reencrypted: 0, unreadable: 0 };
      let after = '';
      for (;;) {
        const batch = await db
          .selectFrom('user_credentials')
          .selectAll()
          .where('key_id', '!=', keyring.currentKeyId)
          .where('id', '>', after)
          .orderBy('id')
          .limit(REENCRYPT_BATCH)
          .execute();
        for (const row of batch) {
          const binding = bindingOf(row);
          const opened = keyring.open(binding, { ciphertext: row.ciphertext, nonce: row.nonce, keyId: row.key_id });
          if (!opened.ok) {
            report.unreadable += 1;
            logger.warn(
              { credentialId: row.id, keyId: row.key_id, reason: opened.reason },
              'credential not re-encrypted: no configured key opens it',
            );
            continue;
          }
          const sealed = keyring.seal(binding, opened.value);
          // Only if nobody rewrote the row meanwhile (a concurrent store already used the current key).
          const result = await db
            .updateTable('user_credentials')
            .set({ ciphertext: sealed.ciphertext, nonce: sealed.nonce, key_id: sealed.keyId })
            .where('id', '=', row.id)
            .where('key_id', '=', row.key_id)
            .where('nonce', '=', row.nonce)
            .executeTakeFirst();
          if (result.numUpdatedRows > 0n) {
            report.reencrypted += 1;
            await changed(row.user_id);
          }
        }
        const last = batch.at(-1);
        if (!last || batch.length < REENCRYPT_BATCH) return report;
        after = last.id;
      }
    },
  };
}
