import { ForbiddenError, MemoryCache, newId, NotFoundError, ValidationError, type Clock, type Config, type EventBus, type Logger } from '@agentgw/core';
import { json, type CredentialKind, type Database, type UserCredentialRow } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { authUrlFor, authUrlsFor, findCredentialProviders } from './auth-urls.js';
import { createCredentialKeyring, type CredentialBinding, type CredentialKeyring } from './credential-keyring.js';
import type { CredentialResolution } from './credential-resolvers.js';

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
}

/** What the API shows about a stored credential; never the secret. */
export interface CredentialMetadata {
  id: string;
  serviceType: string;
  kind: CredentialKind;
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

export type CheckResult = { hasCredential: true; credential: CredentialMetadata } | { hasCredential: false; authUrl: string };

export interface ReencryptReport {
  /** Rows now sealed under the current key. */
  reencrypted: number;
  /** Rows no configured key opens (wrong key, tampered): left as they are. */
  unreadable: number;
}

/** Users' credentials: stored sealed, listed as metadata, resolved in plaintext for invokes. */
export interface Vault {
  list(userId: string): Promise<CredentialMetadata[]>;
  store(input: StoreCredentialInput): Promise<CredentialMetadata>;
  /** Deletes the user's own credential; another user's id is indistinguishable from an unknown one. */
  remove(userId: string, id: string): Promise<void>;
  resolve(input: { userId: string; tenantId: string | null; serviceTypes: string[] }): Promise<CredentialResolution>;
  check(input: { userId: string; tenantId: string | null; serviceType: string }): Promise<CheckResult>;
  reencryptAll(): Promise<ReencryptReport>;
}

const toMetadata = (row: UserCredentialRow): CredentialMetadata => ({
  id: row.id,
  serviceType: row.service_type,
  kind: row.kind,
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

  /** The plaintext of a usable credential, or null when it is expired or cannot be decrypted. */
  function usableValue(row: UserCredentialRow): string | null {
    if (row.expires_at && new Date(row.expires_at).getTime() <= clock.now().getTime()) return null;
    const opened = keyring.open(bindingOf(row), { ciphertext: row.ciphertext, nonce: row.nonce, keyId: row.key_id });
    if (opened.ok) return opened.value;
    logger.warn(
      { credentialId: row.id, userId: row.user_id, serviceType: row.service_type, keyId: row.key_id, reason: opened.reason },
      'stored credential cannot be decrypted; treating it as missing',
    );
    return null;
  }

  const rowsFor = (userId: string, serviceTypes: readonly string[]) =>
    serviceTypes.length === 0 ? Promise.resolve([]) : db.selectFrom('user_credentials').selectAll().where('user_id', '=', userId).where('service_type', 'in', serviceTypes).execute();

  // The invoke hot path: every sealed row of a user (a handful), kept until an event or the TTL.
  const { bus } = deps;
  const sealedRows = new MemoryCache<UserCredentialRow[]>({ ttlMs: SEALED_ROWS_TTL_MS, max: 10_000, clock });
  let subscribed: Promise<unknown> | null = null;
  async function cachedRowsFor(userId: string, serviceTypes: readonly string[]): Promise<UserCredentialRow[]> {
    if (!bus) return rowsFor(userId, serviceTypes);
    subscribed ??= Promise.all([sealedRows.invalidateOn(bus, 'credential.changed', ({ userId: changed }) => changed), sealedRows.invalidateOn(bus, 'user.changed', ({ userId: changed }) => changed)]);
    await subscribed;
    const rows = await sealedRows.getOrLoad(userId, () => db.selectFrom('user_credentials').selectAll().where('user_id', '=', userId).execute());
    return rows.filter((row) => serviceTypes.includes(row.service_type));
  }
  const changed = async (userId: string) => {
    sealedRows.delete(userId);
    await bus?.publish('credential.changed', { userId });
  };

  return {
    async list(userId) {
      const rows = await db.selectFrom('user_credentials').selectAll().where('user_id', '=', userId).orderBy('service_type').execute();
      return rows.map(toMetadata);
    },

    async store(input) {
      const now = clock.now();
      if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
        throw new ValidationError('expiresAt: must be in the future', { field: 'expiresAt' });
      }
      // External-issuer users may have no account here; credentials hang off an account (FK, cascade on delete).
      const user = await db.selectFrom('users').select('id').where('id', '=', input.userId).executeTakeFirst();
      if (!user) throw new ForbiddenError('Credentials can only be stored for users registered with the gateway', 'USER_NOT_REGISTERED');

      const sealed = keyring.seal({ userId: input.userId, serviceType: input.serviceType, kind: input.kind }, input.secret);
      const values = {
        tenant_id: input.tenantId,
        kind: input.kind,
        ciphertext: sealed.ciphertext,
        nonce: sealed.nonce,
        key_id: sealed.keyId,
        metadata: json({}),
        expires_at: input.expiresAt,
        updated_at: now,
      };
      const row = await db
        .insertInto('user_credentials')
        .values({ id: newId(), user_id: input.userId, service_type: input.serviceType, created_at: now, ...values })
        .onConflict((oc) => oc.columns(['user_id', 'service_type']).doUpdateSet(values))
        .returningAll()
        .executeTakeFirstOrThrow();
      await changed(input.userId);
      return toMetadata(row);
    },

    async remove(userId, id) {
      const result = await db.deleteFrom('user_credentials').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      if (result.numDeletedRows === 0n) throw new NotFoundError('Credential');
      await changed(userId);
    },

    async resolve({ userId, tenantId, serviceTypes }) {
      const wanted = [...new Set(serviceTypes)];
      const rows = await cachedRowsFor(userId, wanted);
      const credentials: Record<string, string> = {};
      for (const row of rows) {
        const value = usableValue(row);
        if (value !== null) credentials[row.service_type] = value;
      }
      const missing = wanted.filter((t) => !(t in credentials));
      // The usual invoke has everything it needs: no provider lookup then.
      const authUrls = missing.length === 0 ? {} : await authUrlsFor(db, config, tenantId, missing);
      return { credentials, missing, authUrls };
    },

    async check({ userId, tenantId, serviceType }) {
      const [row] = await rowsFor(userId, [serviceType]);
      if (row && usableValue(row) !== null) return { hasCredential: true, credential: toMetadata(row) };
      const providers = await findCredentialProviders(db, tenantId, [serviceType]);
      return { hasCredential: false, authUrl: authUrlFor(config, serviceType, providers.get(serviceType)) };
    },

    async reencryptAll() {
      const report: ReencryptReport = { reencrypted: 0, unreadable: 0 };
      let after = '';
      for (;;) {
        const batch = await db.selectFrom('user_credentials').selectAll().where('key_id', '!=', keyring.currentKeyId).where('id', '>', after).orderBy('id').limit(REENCRYPT_BATCH).execute();
        for (const row of batch) {
          const binding = bindingOf(row);
          const opened = keyring.open(binding, { ciphertext: row.ciphertext, nonce: row.nonce, keyId: row.key_id });
          if (!opened.ok) {
            report.unreadable += 1;
            logger.warn({ credentialId: row.id, keyId: row.key_id, reason: opened.reason }, 'credential not re-encrypted: no configured key opens it');
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
