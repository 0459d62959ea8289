import { ConflictError } from '@agentgw/core';
import type { ServiceDeps } from '@agentgw/service-kit';
import { createUserAccount, findUserByEmail } from './users.js';

/**
 * First-boot admin from ADMIN_EMAIL/ADMIN_PASSWORD (all-in-one and admin-api start-up).
 * Idempotent: an existing account with that email is left as it is, password included.
 */
export async function ensureBootstrapAdmin(
  deps: Pick<ServiceDeps, 'config' | 'db' | 'bus' | 'clock' | 'logger'>,
): Promise<'created' | 'exists' | 'skipped'> {
  const { ADMIN_EMAIL: email, ADMIN_PASSWORD: password } = deps.config;
  if (!email || !password) {
    if (email || password)
      deps.logger.warn('ADMIN_EMAIL and ADMIN_PASSWORD must both be set to create the first admin; skipped');
    return 'skipped';
  }
  if (await findUserByEmail(deps.db, email)) return 'exists';
  try {
    await createUserAccount(deps, { email, password, roles: ['admin'] });
  } catch (err) {
    if (err instanceof ConflictError) return 'exists'; // another replica created it first
    throw err;
  }
  deps.logger.info({ email }, 'created the admin account from ADMIN_EMAIL');
  return 'created';
}
