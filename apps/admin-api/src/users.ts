import { hashPassword, type Principal } from '@agentgw/auth';
import { ConflictError, NotFoundError, newId, type Clock, type EventBus } from '@agentgw/core';
import type { Database, RoleName, UserRow } from '@agentgw/db';
import { sql, type Kysely, type UpdateObject } from 'kysely';
import { conflictOnUnique } from './unique-conflict.js';

export interface User {
  id: string;
  email: string;
  name: string | null;
  roles: RoleName[];
  tenantId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewUserInput {
  email: string;
  password: string;
  name?: string | null;
  roles?: RoleName[];
  tenantId?: string | null;
}

export interface UserPatch {
  email?: string;
  password?: string;
  name?: string | null;
  roles?: RoleName[];
  tenantId?: string | null;
}

type UsersDeps = { db: Kysely<Database>; bus: EventBus; clock: Clock };

/** The only way a user row leaves the service: no password hash. */
export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    roles: row.roles,
    tenantId: row.tenant_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

const unique = <T>(items: readonly T[]): T[] => [...new Set(items)];

export async function findUserByEmail(db: Kysely<Database>, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
}

/** Creates a user account (the API, registration, bootstrap and the CLI); roles default to `[agent_creator]`. A taken email is 409 EMAIL_TAKEN. */
export async function createUserAccount(deps: UsersDeps, input: NewUserInput): Promise<User> {
  const now = deps.clock.now();
  const values = {
    id: newId(),
    email: normalizeEmail(input.email),
    password_hash: await hashPassword(input.password),
    name: input.name ?? null,
    roles: unique<RoleName>(input.roles ?? ['agent_creator']),
    tenant_id: input.tenantId ?? null,
    created_at: now,
    updated_at: now,
  };
  const row = await conflictOnUnique(
    () => deps.db.insertInto('users').values(values).returningAll().executeTakeFirstOrThrow(),
    emailTaken,
  );
  await deps.bus.publish('user.changed', { userId: row.id });
  return toUser(row);
}

export async function listUsers(db: Kysely<Database>): Promise<User[]> {
  const rows = await db.selectFrom('users').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(toUser);
}

export async function getUser(db: Kysely<Database>, id: string): Promise<User> {
  return toUser(await loadUser(db, id));
}

export async function updateUser(deps: UsersDeps, actor: Principal, id: string, patch: UserPatch): Promise<User> {
  const current = await loadUser(deps.db, id);
  if (patch.roles) guardOwnAdminRole(actor, current, patch.roles);
  const changes = {
    ...(patch.email !== undefined && { email: normalizeEmail(patch.email) }),
    // Stamping the change ends every login token issued before it (auth compares the stamp).
    ...(patch.password !== undefined && {
      password_hash: await hashPassword(patch.password),
      password_changed_at: deps.clock.now(),
    }),
    ...(patch.name !== undefined && { name: patch.name }),
    ...(patch.roles !== undefined && { roles: unique(patch.roles) }),
    ...(patch.tenantId !== undefined && { tenant_id: patch.tenantId }),
  };
  return writeUser(deps, id, changes);
}

/** Role changes are single SQL array updates, so concurrent assignments cannot undo each other. */
export async function addRole(deps: UsersDeps, id: string, role: RoleName): Promise<User> {
  const current = await loadUser(deps.db, id);
  if (current.roles.includes(role)) return toUser(current);
  return writeUser(deps, id, {
    roles: sql<RoleName[]>`case when ${role}::text = any(roles) then roles else array_append(roles, ${role}::text) end`,
  });
}

export async function removeRole(deps: UsersDeps, actor: Principal, id: string, role: RoleName): Promise<User> {
  const current = await loadUser(deps.db, id);
  if (!current.roles.includes(role)) return toUser(current);
  guardOwnAdminRole(
    actor,
    current,
    current.roles.filter((r) => r !== role),
  );
  return writeUser(deps, id, { roles: sql<RoleName[]>`array_remove(roles, ${role}::text)` });
}

/** Deletes a user. An admin cannot delete themselves (409), so the last admin cannot lock everyone out by accident. */
export async function deleteUser(deps: UsersDeps, actor: Principal, id: string): Promise<void> {
  if (actor.userId === id) throw new ConflictError('You cannot delete your own account', 'CANNOT_DELETE_SELF');
  const deleted = await deps.db.deleteFrom('users').where('id', '=', id).returning('id').executeTakeFirst();
  if (!deleted) throw new NotFoundError('User');
  await deps.bus.publish('user.changed', { userId: id });
}

async function loadUser(db: Kysely<Database>, id: string): Promise<UserRow> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('User');
  return row;
}

async function writeUser(deps: UsersDeps, id: string, changes: UpdateObject<Database, 'users'>): Promise<User> {
  const row = await conflictOnUnique(
    () =>
      deps.db
        .updateTable('users')
        .set({ ...changes, updated_at: deps.clock.now() })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),
    emailTaken,
  );
  if (!row) throw new NotFoundError('User');
  await deps.bus.publish('user.changed', { userId: id });
  return toUser(row);
}

/** An admin cannot take the admin role away from themselves (same lock-out reason as self-delete). */
function guardOwnAdminRole(actor: Principal, target: UserRow, nextRoles: readonly RoleName[]): void {
  if (actor.userId === target.id && target.roles.includes('admin') && !nextRoles.includes('admin')) {
    throw new ConflictError('You cannot remove your own admin role', 'CANNOT_DEMOTE_SELF');
  }
}

const emailTaken = (): ConflictError => new ConflictError('Email is already registered', 'EMAIL_TAKEN');
