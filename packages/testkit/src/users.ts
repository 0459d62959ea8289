import { hashPassword } from '@agentgw/auth';
import { newId } from '@agentgw/core';
import type { RoleName } from '@agentgw/db';
import type { ServiceDeps } from '@agentgw/service-kit';

export interface TestUser {
  id: string;
  email: string;
  password: string;
  name: string | null;
  roles: RoleName[];
  tenantId: string | null;
}

/**
 * One scrypt hash per password and process (~0.15 s of CPU each at the production cost): test
 * users sharing a password share its hash, which login verifies as any other. A failed hash is
 * not kept.
 */
const hashes = new Map<string, Promise<string>>();
function testPasswordHash(password: string): Promise<string> {
  let hash = hashes.get(password);
  if (!hash) {
    hash = hashPassword(password);
    hashes.set(password, hash);
    hash.catch(() => hashes.delete(password));
  }
  return hash;
}

/** Inserts a user straight into the database (no HTTP), so tests can set any roles and tenant. */
export async function createUser(
  deps: Pick<ServiceDeps, 'db'>,
  input: { email: string; password?: string; name?: string; roles?: RoleName[]; tenantId?: string | null },
): Promise<TestUser> {
  const user: TestUser = {
    id: newId(),
    email: input.email.toLowerCase(),
    password: input.password ?? 'test-password-1',
    name: input.name ?? null,
    roles: input.roles ?? [],
    tenantId: input.tenantId ?? null,
  };
  await deps.db
    .insertInto('users')
    .values({
      id: user.id,
      email: user.email,
      password_hash: await testPasswordHash(user.password),
      name: user.name,
      tenant_id: user.tenantId,
      roles: user.roles,
    })
    .execute();
  return user;
}

/** A user JWT signed exactly as login would sign it. */
export function tokenFor(
  deps: Pick<ServiceDeps, 'auth'>,
  user: Pick<TestUser, 'id' | 'email' | 'roles' | 'tenantId'>,
): Promise<string> {
  return deps.auth.signUserToken({ id: user.id, email: user.email, roles: user.roles, tenantId: user.tenantId });
}

export function authHeaders(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra };
}
