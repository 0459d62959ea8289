import { ConflictError, systemClock } from '@agentgw/core';
import { migrateToLatest, openDatabase, type DbHandle } from '@agentgw/db';
import { z } from 'zod';
import { createAdmin, listAdmins } from '../admins.js';
import { databaseUrlOf, readEnvironment, type EnvironmentInput } from '../environment.js';

const required = (otherwise: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : otherwise;
const newAdmin = z.object({
  email: z.email({ error: required('must be an email address') }),
  password: z.string({ error: required('must be a string') }).min(8, 'must be at least 8 characters'),
  name: z.string().min(1, 'must not be empty').optional(),
});

/**
 * Opens (and migrates) the database the gateway would use. A running gateway holds the
 * embedded database's lock, so this fails with DatabaseLockedError naming it rather than
 * opening the files twice.
 */
async function withDatabase<T>(input: EnvironmentInput, work: (handle: DbHandle) => Promise<T>): Promise<T> {
  const { env, dataDir } = readEnvironment(input);
  const handle = await openDatabase({ url: databaseUrlOf(env), dataDir });
  try {
    await migrateToLatest(handle.db);
    return await work(handle);
  } finally {
    await handle.close();
  }
}

export async function adminCreateCommand(
  input: EnvironmentInput,
  args: { email?: string; password?: string; name?: string },
): Promise<number> {
  const parsed = newAdmin.safeParse(args);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) console.error(`--${String(issue.path[0])} ${issue.message}`);
    return 2;
  }
  return withDatabase(input, async ({ db }) => {
    try {
      const admin = await createAdmin({ db, clock: systemClock }, parsed.data);
      console.log(`Created admin ${admin.email} (${admin.id}).`);
      return 0;
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      console.error(`A user with the email ${parsed.data.email} already exists.`);
      return 1;
    }
  });
}

export async function adminListCommand(input: EnvironmentInput): Promise<number> {
  return withDatabase(input, async ({ db }) => {
    const admins = await listAdmins(db);
    if (admins.length === 0) {
      console.log('No admin accounts yet. Create one with: gateway admin create --email <email> --password <password>');
      return 0;
    }
    for (const a of admins) {
      console.log([a.id, a.email, a.name ?? '-', a.tenantId ?? '(global)', a.createdAt].join('  '));
    }
    return 0;
  });
}
