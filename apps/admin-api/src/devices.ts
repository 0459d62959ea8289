import { hasActingUser, type Principal } from '@agentgw/auth';
import { ConflictError, ForbiddenError, NotFoundError, newId, type Clock } from '@agentgw/core';
import type { Database, DevicePlatform, DeviceRow } from '@agentgw/db';
import { sql, type Kysely } from 'kysely';

export interface Device {
  id: string;
  platform: DevicePlatform;
  deviceName: string | null;
  /** Leading characters only: the full push token is a delivery credential and is never echoed back. */
  pushTokenPrefix: string;
  isActive: boolean;
  createdAt: string;
}

type DevicesDeps = { db: Kysely<Database>; clock: Clock };

const PUSH_TOKEN_PREFIX_LENGTH = 8;

export function toDevice(row: DeviceRow): Device {
  return {
    id: row.id,
    platform: row.platform,
    deviceName: row.device_name,
    pushTokenPrefix: row.push_token.slice(0, PUSH_TOKEN_PREFIX_LENGTH),
    isActive: row.is_active,
    createdAt: row.created_at.toISOString(),
  };
}

/** Devices belong to a user; a bare agent runtime token has none. */
function ownerOf(principal: Principal): string {
  if (!hasActingUser(principal)) throw new ForbiddenError('Devices belong to a user; this credential carries no user');
  return principal.userId;
}

/**
 * Registers the caller's device, or reactivates it when the caller already registered this
 * push token. A token another user holds an active registration of is refused (409
 * PUSH_TOKEN_IN_USE): nothing proves who holds the device, so a caller who learned someone's
 * token must neither silence their device nor have their own notifications pushed to it. The
 * device changes hands when the previous user removes it (or push delivery deactivates it).
 */
export async function registerDevice(
  deps: DevicesDeps,
  principal: Principal,
  input: { platform: DevicePlatform; pushToken: string; deviceName?: string | null },
): Promise<{ device: Device; created: boolean }> {
  const userId = ownerOf(principal);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    // A caller from an external issuer may have no local account; devices hang off users.
    const user = await trx.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
    if (!user)
      throw new ForbiddenError(
        'Devices can only be registered for users registered with the gateway',
        'USER_NOT_REGISTERED',
      );
    const heldByOther = await trx
      .selectFrom('devices')
      .select('id')
      .where('push_token', '=', input.pushToken)
      .where('user_id', '!=', userId)
      .where('is_active', '=', true)
      .executeTakeFirst();
    if (heldByOther) {
      throw new ConflictError(
        'This push token is registered to another account; remove the device there first',
        'PUSH_TOKEN_IN_USE',
      );
    }
    const fields = {
      platform: input.platform,
      device_name: input.deviceName ?? null,
      tenant_id: principal.tenantId,
      is_active: true,
      updated_at: now,
    };
    // One statement, so two concurrent registrations of one token cannot both insert.
    const { inserted, ...row } = await trx
      .insertInto('devices')
      .values({ id: newId(), user_id: userId, push_token: input.pushToken, created_at: now, ...fields })
      .onConflict((oc) => oc.columns(['user_id', 'push_token']).doUpdateSet(fields))
      .returningAll()
      .returning(sql<boolean>`xmax = 0`.as('inserted')) // Postgres: xmax is 0 only on a freshly inserted row version
      .executeTakeFirstOrThrow();
    return { device: toDevice(row), created: inserted };
  });
}

export async function listDevices(db: Kysely<Database>, principal: Principal): Promise<Device[]> {
  const rows = await db
    .selectFrom('devices')
    .selectAll()
    .where('user_id', '=', ownerOf(principal))
    .where('is_active', '=', true)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toDevice);
}

/** Removes one of the caller's devices; anyone else's answers 404. */
export async function deleteDevice(db: Kysely<Database>, principal: Principal, id: string): Promise<void> {
  const deleted = await db
    .deleteFrom('devices')
    .where('id', '=', id)
    .where('user_id', '=', ownerOf(principal))
    .returning('id')
    .executeTakeFirst();
  if (!deleted) throw new NotFoundError('Device');
}
