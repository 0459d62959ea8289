import type { Kysely } from 'kysely';
import { MemoryCache, UnauthorizedError, type Clock, type EventBus, type Unsubscribe } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import { IDENTITY_CACHE, type IdentityCache, type UserIdentity } from './identity-cache.js';
import type { JwtCodec, UserTokenIdentity } from './jwt.js';

/**
 * The local user a user token speaks for, whichever trusted issuer signed it (our own, the
 * JWT_PUBLIC_KEY, a JWT_EXTERNAL_ISSUERS item); links an external identity to a local user.
 */
export class ExternalIdentities {
  // (issuer, subject) → linked local user id; dropped with any user change (links die with users).
  private readonly links: MemoryCache<string | null>;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      codec: Pick<JwtCodec, 'verifyUserToken'>;
      users: Pick<IdentityCache, 'userById' | 'userByEmail'>;
      clock: Clock;
    },
  ) {
    this.links = new MemoryCache({ ...IDENTITY_CACHE, clock: deps.clock });
  }

  /** Drops every link on `user.changed`; the returned function stops listening. */
  listen(bus: EventBus): Promise<Unsubscribe> {
    return this.links.invalidateOn(bus, 'user.changed');
  }

  /**
   * The user a login token speaks for.
   * - Our own tokens must name a live user and carry its current password stamp, so a password
   *   change ends every login issued before it (TOKEN_REVOKED).
   * - JWT_PUBLIC_KEY tokens carry our issuer, so their subject is a local user id.
   * - Otherwise (and for external issuers always) the user linked to `(issuer, subject)`; failing
   *   that, the local user with the token's email, but only when the issuer says
   *   `email_verified: true` — the link is then recorded so later tokens map by subject.
   * A caller unknown here gets a principal with no roles and an id in its issuer's namespace
   * (`external:<issuer>:<sub>`), so a `sub` equal to a local user's id never becomes that user.
   */
  async userFromToken(token: string): Promise<UserIdentity> {
    const { users } = this.deps;
    const identity = await this.deps.codec.verifyUserToken(token);
    if (identity.source === 'gateway') {
      const user = await users.userById(identity.sub);
      if (!user) throw new UnauthorizedError('User no longer exists');
      if (identity.passwordStamp !== user.passwordStamp) {
        throw new UnauthorizedError('The password changed since this token was issued; sign in again', 'TOKEN_REVOKED');
      }
      return user;
    }
    if (identity.source === 'public_key') {
      const user = await users.userById(identity.sub);
      if (user) return user;
    }
    const local = await this.localUserOf(identity);
    if (local) return local;
    const id = identity.source === 'public_key' ? identity.sub : `external:${identity.issuer}:${identity.sub}`;
    return { id, email: identity.email, roles: [], tenantId: null, passwordStamp: 0 };
  }

  /**
   * The local user an external person is (the one rule for tokens and for "continue with"
   * logins): the user linked to `(issuer, subject)`, else the user with the verified email
   * (then linked); null when there is none (no account is created).
   */
  async localUserOf(
    identity: Pick<UserTokenIdentity, 'issuer' | 'sub' | 'email' | 'emailVerified'>,
  ): Promise<UserIdentity | null> {
    const { users } = this.deps;
    const linked = await this.linkedUserId(identity.issuer, identity.sub);
    const linkedUser = linked === null ? null : await users.userById(linked);
    if (linkedUser) return linkedUser;
    if (!identity.email || !identity.emailVerified) return null;
    const byEmail = await users.userByEmail(identity.email);
    if (byEmail) await this.link(identity, byEmail.id);
    return byEmail ?? null;
  }

  private linkedUserId(issuer: string, subject: string): Promise<string | null> {
    return this.links.getOrLoad(linkKey(issuer, subject), async () => {
      const row = await this.deps.db
        .selectFrom('external_identities')
        .select('user_id')
        .where('issuer', '=', issuer)
        .where('subject', '=', subject)
        .executeTakeFirst();
      return row?.user_id ?? null;
    });
  }

  private async link(identity: Pick<UserTokenIdentity, 'issuer' | 'sub'>, userId: string): Promise<void> {
    await this.deps.db
      .insertInto('external_identities')
      .values({ issuer: identity.issuer, subject: identity.sub, user_id: userId })
      .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
      .execute();
    this.links.set(linkKey(identity.issuer, identity.sub), userId);
  }
}

const linkKey = (issuer: string, subject: string): string => `${issuer}\u0000${subject}`;
