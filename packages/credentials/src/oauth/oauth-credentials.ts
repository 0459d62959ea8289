import { recordIdentityEvent } from '@agentgw/audit';
import type { Clock, Logger } from '@agentgw/core';
import { json, type Database, type UserCredentialRow } from '@agentgw/db';
import type { Kysely } from 'kysely';
import type { CredentialBinding, CredentialKeyring } from '../credential-keyring.js';
import type { VaultOAuth } from './vault-oauth.js';
import { oauthConfigOf, type OAuthProviderConfig } from './oauth-provider-config.js';
import {
  oauthMetadataOf,
  openOAuthSecret,
  sealableOAuthSecret,
  type OAuthRowMetadata,
  type OAuthSecret,
} from './oauth-tokens.js';

/** What the vault lends its OAuth helpers: its database, key ring, clock, and how to announce a change. */
export interface OAuthCredentialsContext {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  keyring: CredentialKeyring;
  oauth: VaultOAuth;
  /** Drops cached rows of the user here and on every replica. */
  changed(userId: string): Promise<void>;
}

/** The parts of an identity event about the connected account `row` (whose user, which service), without a secret. */
export function connectedAccountEvent(row: UserCredentialRow) {
  return {
    userId: row.user_id,
    tenantId: row.tenant_id,
    clientId: null,
    details: {
      connectionId: row.id,
      serviceType: row.service_type,
      providerId: oauthMetadataOf(row)?.providerId ?? null,
    },
  };
}

/** How long before its expiry an OAuth access token is refreshed. */
export const REFRESH_BEFORE_EXPIRY_MS = 60_000;

const bindingOf = (row: UserCredentialRow): CredentialBinding => ({
  userId: row.user_id,
  serviceType: row.service_type,
  kind: row.kind,
});

/** Whether the row is an OAuth connection that can and should be refreshed now. */
export function refreshDue(row: UserCredentialRow, now: Date): boolean {
  if (row.kind !== 'oauth2' || row.expires_at === null) return false;
  const meta = oauthMetadataOf(row);
  if (!meta?.refreshable || meta.status !== 'connected') return false;
  return new Date(row.expires_at).getTime() - now.getTime() <= REFRESH_BEFORE_EXPIRY_MS;
}

/** The opened tokens of an OAuth row, or null (logged, never the value) when no key opens it. */
export function openOAuthRow(
  ctx: Pick<OAuthCredentialsContext, 'keyring' | 'logger'>,
  row: UserCredentialRow,
): OAuthSecret | null {
  const opened = ctx.keyring.open(bindingOf(row), { ciphertext: row.ciphertext, nonce: row.nonce, keyId: row.key_id });
  const secret = opened.ok ? openOAuthSecret(opened.value) : null;
  if (!secret)
    ctx.logger.warn(
      { credentialId: row.id, userId: row.user_id, serviceType: row.service_type, keyId: row.key_id },
      'stored OAuth credential cannot be opened; treating it as missing',
    );
  return secret;
}

/** The provider the row was connected through, ready to use; null when it is gone or no longer names a server. */
async function providerConfigOf(ctx: OAuthCredentialsContext, providerId: string): Promise<OAuthProviderConfig | null> {
  const row = await ctx.db
    .selectFrom('credential_providers')
    .selectAll()
    .where('id', '=', providerId)
    .executeTakeFirst();
  return row ? oauthConfigOf(row, ctx.oauth.secrets) : null;
}

/** The `user_credentials` columns for sealed OAuth tokens. */
export function oauthColumns(
  keyring: CredentialKeyring,
  binding: CredentialBinding,
  secret: OAuthSecret,
  expiresAt: Date | null,
  meta: OAuthRowMetadata,
) {
  const sealed = keyring.seal(binding, sealableOAuthSecret(secret));
  return {
    ciphertext: sealed.ciphertext,
    nonce: sealed.nonce,
    key_id: sealed.keyId,
    expires_at: expiresAt,
    metadata: json(meta),
  };
}

/**
 * The row with a fresh access token: refreshed under the credential's lock when it expires within
 * REFRESH_BEFORE_EXPIRY_MS. Whoever gets the lock first refreshes (once, across replicas); the
 * others find the new row when it is their turn. A rotated refresh token replaces the old one;
 * a refusal (`invalid_grant`) marks the credential `needs_reconnect`; a server that cannot be
 * reached leaves the row as it is (still usable until its expiry).
 */
export async function freshOAuthRow(ctx: OAuthCredentialsContext, row: UserCredentialRow): Promise<UserCredentialRow> {
  if (!refreshDue(row, ctx.clock.now())) return row;
  return ctx.oauth.lock.withLock(`${row.user_id}:${row.service_type}`, async () => {
    const current = await ctx.db.selectFrom('user_credentials').selectAll().where('id', '=', row.id).executeTakeFirst();
    if (!current || !refreshDue(current, ctx.clock.now())) return current ?? row;
    const meta = oauthMetadataOf(current)!;
    const secret = openOAuthRow(ctx, current);
    const cfg = await providerConfigOf(ctx, meta.providerId);
    if (!secret?.refreshToken || !cfg) return current;
    const outcome = await ctx.oauth.client.refresh(cfg, secret.refreshToken);
    const log = { credentialId: current.id, userId: current.user_id, serviceType: current.service_type };
    let set;
    if (outcome.kind === 'failed') {
      ctx.logger.warn({ ...log, reason: outcome.reason }, 'OAuth refresh failed; keeping the current token');
      return current;
    } else if (outcome.kind === 'refused') {
      ctx.logger.info({ ...log, error: outcome.error }, 'OAuth refresh refused by the server; the user must reconnect');
      set = { metadata: json({ ...meta, status: 'needs_reconnect' }) };
    } else {
      const { tokens } = outcome;
      const next: OAuthSecret = {
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken ?? secret.refreshToken,
      };
      set = oauthColumns(ctx.keyring, bindingOf(current), next, tokens.expiresAt, {
        ...meta,
        scope: tokens.scope ?? meta.scope,
      });
    }
    const updated = await ctx.db
      .updateTable('user_credentials')
      .set({ ...set, updated_at: ctx.clock.now() })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirst();
    await ctx.changed(current.user_id);
    await recordIdentityEvent(ctx.db, {
      ...connectedAccountEvent(current),
      type: outcome.kind === 'refused' ? 'connected_account.refresh_refused' : 'connected_account.refreshed',
      actorId: null,
    });
    return updated ?? current;
  });
}

/** RFC 7009: revokes the row's refresh and access tokens where the provider's server supports it (best effort). */
export async function revokeOAuthRow(ctx: OAuthCredentialsContext, row: UserCredentialRow): Promise<void> {
  const meta = oauthMetadataOf(row);
  if (!meta) return;
  const secret = openOAuthRow(ctx, row);
  const cfg = await providerConfigOf(ctx, meta.providerId).catch(() => null);
  if (!secret || !cfg) return;
  if (secret.refreshToken) await ctx.oauth.client.revoke(cfg, secret.refreshToken, 'refresh_token');
  await ctx.oauth.client.revoke(cfg, secret.accessToken, 'access_token');
}
