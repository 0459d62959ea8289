import type { Kysely } from 'kysely';
import { UnauthorizedError } from '@agentgw/core';
import type { Database, RoleName } from '@agentgw/db';
import { PASSWORD_STAMP_CLAIM, type JwtCodec } from './jwt.js';
import { issueSessionToken, verifySessionToken, type SessionClaims, type SessionTokenInput } from './session-token.js';

export const CONFIRMATION_TOKEN_LIFETIME_SECONDS = 5 * 60;
export const SERVICE_TOKEN_LIFETIME_SECONDS = 60;

export interface ConfirmationClaims {
  confirmationId: string;
  /** User who confirmed. */
  userId: string | null;
}

/** Every token the gateway signs (login, session, confirmation, service) and the checks of the last three. */
export interface TokenIssuing {
  /** Lifetime of login tokens in seconds (JWT_EXPIRES_IN). */
  readonly loginTokenLifetime: number;
  signUserToken(user: { id: string; email: string; roles: RoleName[]; tenantId: string | null }): Promise<string>;
  issueSessionToken(input: SessionTokenInput): Promise<{ token: string; expiresIn: number }>;
  verifySessionToken(token: string, presenter: { agentId: string }): Promise<SessionClaims>;
  signConfirmationToken(claims: ConfirmationClaims): Promise<{ token: string; expiresIn: number }>;
  verifyConfirmationToken(token: string): Promise<ConfirmationClaims>;
  /** Short-lived token one service presents to another (`audience` = the callee's name). */
  signServiceToken(service: string, audience: string): Promise<string>;
  verifyServiceToken(token: string, audience: string): Promise<{ service: string }>;
}

/** Token issuing over a codec (verification cached by the caller's codec). */
export function tokenIssuing(deps: {
  db: Kysely<Database>;
  codec: JwtCodec;
  loginTokenLifetime: number;
}): TokenIssuing {
  const { db, codec, loginTokenLifetime } = deps;
  return {
    loginTokenLifetime,

    // The password stamp is read fresh (not cached): a token signed right after a change must carry the new one.
    async signUserToken(user) {
      const row = await db
        .selectFrom('users')
        .select('password_changed_at')
        .where('id', '=', user.id)
        .executeTakeFirst();
      const stamp = row?.password_changed_at?.getTime() ?? 0;
      return codec.sign(
        'login',
        { sub: user.id, email: user.email, roles: user.roles, tenantId: user.tenantId, [PASSWORD_STAMP_CLAIM]: stamp },
        loginTokenLifetime,
      );
    },

    issueSessionToken: (input) => issueSessionToken(codec, input),
    verifySessionToken: (token, presenter) => verifySessionToken(codec, token, presenter),

    async signConfirmationToken({ confirmationId, userId }) {
      const token = await codec.sign(
        'confirmation',
        { sub: confirmationId, userId },
        CONFIRMATION_TOKEN_LIFETIME_SECONDS,
      );
      return { token, expiresIn: CONFIRMATION_TOKEN_LIFETIME_SECONDS };
    },
    async verifyConfirmationToken(token) {
      const claims = await codec.verify(token, 'confirmation');
      const userId = claims.userId;
      if (userId !== null && typeof userId !== 'string')
        throw new UnauthorizedError('Invalid confirmation token', 'INVALID_TOKEN');
      return { confirmationId: claims.sub, userId };
    },

    signServiceToken: (service, audience) =>
      codec.sign('service', { sub: service }, SERVICE_TOKEN_LIFETIME_SECONDS, audience),
    async verifyServiceToken(token, audience) {
      const claims = await codec.verify(token, 'service', audience);
      return { service: claims.sub };
    },
  };
}
