import { z } from 'zod';
import { UnauthorizedError } from '@agentgw/core';
import type { RoleName } from '@agentgw/db';
import type { JwtCodec } from './jwt.js';
import { ROLES } from './permissions.js';

/** Session tokens let an agent call back as the end user it was invoked for; keep them short. */
export const SESSION_TOKEN_LIFETIME_SECONDS = 15 * 60;

export interface SessionTokenInput {
  endUserId: string;
  email: string | null;
  roles: RoleName[];
  tenantId: string | null;
  agentId: string;
  requestId: string;
}

export type SessionClaims = SessionTokenInput;

/** Roles that manage other people's resources: an agent acting for its end user never borrows them. */
export const ADMIN_CLASS_ROLES: readonly RoleName[] = ['admin', 'tenant_admin'];

/** The end user's roles a session token may carry (admin-class roles removed). */
export const sessionRoles = (roles: readonly RoleName[]): RoleName[] =>
  roles.filter((role) => !ADMIN_CLASS_ROLES.includes(role));

const claimsSchema = z.object({
  sub: z.string().min(1),
  email: z.string().nullable(),
  roles: z.array(z.enum(ROLES)),
  tenantId: z.string().nullable(),
  agentId: z.string().min(1),
  requestId: z.string(),
});

export async function issueSessionToken(
  codec: JwtCodec,
  input: SessionTokenInput,
): Promise<{ token: string; expiresIn: number }> {
  const { endUserId, roles, ...rest } = input;
  const token = await codec.sign(
    'session',
    { sub: endUserId, roles: sessionRoles(roles), ...rest },
    SESSION_TOKEN_LIFETIME_SECONDS,
  );
  return { token, expiresIn: SESSION_TOKEN_LIFETIME_SECONDS };
}

/** Verifies a session token and that it was issued for the agent presenting it. */
export async function verifySessionToken(
  codec: JwtCodec,
  token: string,
  presenter: { agentId: string },
): Promise<SessionClaims> {
  const parsed = claimsSchema.safeParse(await codec.verify(token, 'session'));
  if (!parsed.success) throw new UnauthorizedError('Invalid session token', 'INVALID_TOKEN');
  const { sub, ...claims } = parsed.data;
  if (claims.agentId !== presenter.agentId) {
    throw new UnauthorizedError('Session token was issued for another agent', 'INVALID_TOKEN');
  }
  // Tokens signed before admin-class roles were left out still lend none of them.
  return { endUserId: sub, ...claims, roles: sessionRoles(claims.roles) };
}
