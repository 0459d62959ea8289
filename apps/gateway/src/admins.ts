import { createUserAccount, listUsers, type User } from '@agentgw/admin-api';
import { MemoryEventBus, type Clock } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';

/**
 * `gateway admin create`. A new account has no cached copy anywhere, so there is nobody to
 * tell: an in-process bus satisfies createUserAccount without reaching for Redis from a CLI command.
 */
export function createAdmin(
  deps: { db: Kysely<Database>; clock: Clock },
  input: { email: string; password: string; name?: string },
): Promise<User> {
  return createUserAccount({ ...deps, bus: new MemoryEventBus() }, { ...input, roles: ['admin'] });
}

export async function listAdmins(db: Kysely<Database>): Promise<User[]> {
  return (await listUsers(db)).filter((u) => u.roles.includes('admin'));
}
