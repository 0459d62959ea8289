import { secretBoxFor, type Keyring } from '@agentgw/auth';
import { json } from '@agentgw/db';
import { sql } from 'kysely';
import { createVault, type ReencryptReport, type VaultDeps } from './vault.js';

/** What `reencryptAllSecrets` did, per kind of sealed secret. */
export interface ReencryptSummary {
  userCredentials: ReencryptReport;
  agentUpstreamSecrets: ReencryptReport;
  providerAuthSecrets: ReencryptReport;
  credentialProviderSecrets: ReencryptReport;
}

const BATCH = 200;

/**
 * Re-seals every sealed secret under the current key: user credentials (the vault's ring,
 * CREDENTIAL_ENCRYPTION_KEY) and the platform secrets (agents' upstream secrets, tool providers'
 * auth secrets, credential providers' config secrets; the platform ring). Values already under
 * the current key are left alone, so it can run again; values no configured key opens are
 * counted and left as they are. After it reports no unreadable value, the previous keys can go.
 */
export async function reencryptAllSecrets(deps: VaultDeps): Promise<ReencryptSummary> {
  const box = secretBoxFor(deps.config);
  return {
    userCredentials: await createVault(deps).reencryptAll(),
    agentUpstreamSecrets: await resealAgents(deps, box),
    providerAuthSecrets: await resealProviders(deps, box),
    credentialProviderSecrets: await resealCredentialProviders(deps, box),
  };
}

type Resealed = { value: string } | 'current' | 'unreadable';

/** One sealed value under the current key; the AAD is the owner row's id, as the catalog seals it. */
function reseal(deps: VaultDeps, box: Keyring, what: string, id: string, sealed: string): Resealed {
  if (box.isCurrent(sealed)) return 'current';
  const opened = box.openResult(sealed, id);
  if (!opened.ok) {
    deps.logger.warn({ what, id, reason: opened.reason }, 'secret not re-encrypted: no configured key opens it');
    return 'unreadable';
  }
  return { value: box.seal(opened.value, id) };
}

/** Walks rows by id in batches; `step` re-seals one row and says what happened. */
async function eachBatch<R extends { id: string }>(
  load: (after: string) => Promise<R[]>,
  step: (row: R, report: ReencryptReport) => Promise<void>,
): Promise<ReencryptReport> {
  const report: ReencryptReport = { reencrypted: 0, unreadable: 0 };
  let after = '';
  for (;;) {
    const batch = await load(after);
    for (const row of batch) await step(row, report);
    const last = batch.at(-1);
    if (!last || batch.length < BATCH) return report;
    after = last.id;
  }
}

function resealAgents(deps: VaultDeps, box: Keyring): Promise<ReencryptReport> {
  return eachBatch(
    (after) =>
      deps.db
        .selectFrom('agents')
        .select(['id', 'upstream_secret_enc'])
        .where('upstream_secret_enc', 'is not', null)
        .where('id', '>', after)
        .orderBy('id')
        .limit(BATCH)
        .execute(),
    async (row, report) => {
      const sealed = row.upstream_secret_enc!;
      const result = reseal(deps, box, 'agent upstream secret', row.id, sealed);
      if (result === 'unreadable') report.unreadable += 1;
      if (typeof result !== 'object') return;
      // Only if nobody rewrote the secret meanwhile (a concurrent write already used the current key).
      const updated = await deps.db
        .updateTable('agents')
        .set({ upstream_secret_enc: result.value })
        .where('id', '=', row.id)
        .where('upstream_secret_enc', '=', sealed)
        .executeTakeFirst();
      if (updated.numUpdatedRows > 0n) report.reencrypted += 1;
    },
  );
}

function resealProviders(deps: VaultDeps, box: Keyring): Promise<ReencryptReport> {
  return eachBatch(
    (after) =>
      deps.db
        .selectFrom('tool_providers')
        .select(['id', 'auth_secret_enc'])
        .where('auth_secret_enc', 'is not', null)
        .where('id', '>', after)
        .orderBy('id')
        .limit(BATCH)
        .execute(),
    async (row, report) => {
      const sealed = row.auth_secret_enc!;
      const result = reseal(deps, box, 'tool provider auth secret', row.id, sealed);
      if (result === 'unreadable') report.unreadable += 1;
      if (typeof result !== 'object') return;
      const updated = await deps.db
        .updateTable('tool_providers')
        .set({ auth_secret_enc: result.value })
        .where('id', '=', row.id)
        .where('auth_secret_enc', '=', sealed)
        .executeTakeFirst();
      if (updated.numUpdatedRows > 0n) report.reencrypted += 1;
    },
  );
}

/**
 * Credential providers keep their secrets sealed inside `config` (any depth, secret-named keys).
 * Every string in the sealed form is a candidate: it is re-sealed when the platform ring opens it
 * for the row, and counted unreadable when it names a key the ring does not hold.
 */
function resealCredentialProviders(deps: VaultDeps, box: Keyring): Promise<ReencryptReport> {
  return eachBatch(
    (after) =>
      deps.db
        .selectFrom('credential_providers')
        .select(['id', 'config'])
        .where('id', '>', after)
        .orderBy('id')
        .limit(BATCH)
        .execute(),
    async (row, report) => {
      let changed = 0;
      let unreadable = 0;
      const walk = (value: unknown): unknown => {
        if (typeof value === 'string' && /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/.test(value)) {
          const result = reseal(deps, box, 'credential provider secret', row.id, value);
          if (result === 'unreadable') unreadable += 1;
          if (typeof result !== 'object') return value;
          changed += 1;
          return result.value;
        }
        if (Array.isArray(value)) return value.map(walk);
        if (value !== null && typeof value === 'object')
          return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
        return value;
      };
      const config = walk(row.config);
      report.unreadable += unreadable;
      if (changed === 0) return;
      // Only if nobody edited the config since it was read (jsonb compares by value).
      const updated = await deps.db
        .updateTable('credential_providers')
        .set({ config: json(config) })
        .where('id', '=', row.id)
        .where(sql<boolean>`config = ${json(row.config)}::jsonb`)
        .executeTakeFirst();
      if (updated.numUpdatedRows > 0n) report.reencrypted += changed;
    },
  );
}
