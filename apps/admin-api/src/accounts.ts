import { hasActingUser, verifyPasswordOrDummy, type Principal } from '@agentgw/auth';
import { ForbiddenError, UnauthorizedError } from '@agentgw/core';
import type { ServiceDeps } from '@agentgw/service-kit';
import type { LoginThrottle } from './login-throttle.js';
import { createUserAccount, findUserByEmail, type User } from './users.js';

export type AccountUser = Pick<User, 'id' | 'email' | 'name' | 'roles' | 'tenantId'>;

const accountUser = (user: User): AccountUser => ({
  id: user.id,
  email: user.email,
  name: user.name,
  roles: user.roles,
  tenantId: user.tenantId,
});

/**
 * Self-registration: always `agent_creator`, always global (tenant null). Roles and tenant are
 * never taken from the caller; only an admin grants more through the users API. Each one costs a
 * password hash, so registrations per client address are throttled (counted before hashing).
 */
export async function register(
  deps: Pick<ServiceDeps, 'config' | 'db' | 'bus' | 'clock'>,
  throttle: LoginThrottle,
  input: { email: string; password: string; name: string },
  address: string,
): Promise<AccountUser> {
  if (!deps.config.ALLOW_SELF_REGISTRATION) {
    throw new ForbiddenError('Self-registration is disabled', 'REGISTRATION_DISABLED');
  }
  await throttle.registration(address);
  const user = await createUserAccount(deps, { ...input, roles: ['agent_creator'], tenantId: null });
  return accountUser(user);
}

/**
 * Email + password → user JWT. Unknown email and wrong password fail alike (same status, code,
 * message and, through the dummy verify, similar timing). The attempt is counted before the
 * password is checked, so parallel guesses cannot outrun the throttle.
 */
export async function login(
  deps: Pick<ServiceDeps, 'db' | 'auth'>,
  throttle: LoginThrottle,
  input: { email: string; password: string },
  address: string,
): Promise<{ token: string; user: AccountUser }> {
  await throttle.attempt(input.email, address);
  const row = await findUserByEmail(deps.db, input.email);
  const ok = await verifyPasswordOrDummy(input.password, row?.password_hash);
  if (!row || !ok) {
    throw new UnauthorizedError('Invalid email or password', 'INVALID_CREDENTIALS');
  }
  await throttle.recordSuccess(input.email, address);
  const user: AccountUser = { id: row.id, email: row.email, name: row.name, roles: row.roles, tenantId: row.tenant_id };
  const token = await deps.auth.signUserToken({
    id: user.id,
    email: user.email,
    roles: user.roles,
    tenantId: user.tenantId,
  });
  return { token, user };
}

/**
 * The caller's own account, for the web console restoring its session from the cookie after a
 * reload. A caller with no local account (an external issuer's unmapped user) is 403.
 */
export async function currentAccount(deps: Pick<ServiceDeps, 'db'>, principal: Principal): Promise<AccountUser> {
  const row = hasActingUser(principal)
    ? await deps.db
        .selectFrom('users')
        .select(['id', 'email', 'name', 'roles', 'tenant_id'])
        .where('id', '=', principal.userId)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new ForbiddenError('This sign-in has no account registered with the gateway', 'USER_NOT_REGISTERED');
  return { id: row.id, email: row.email, name: row.name, roles: row.roles, tenantId: row.tenant_id };
}
