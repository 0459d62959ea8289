import { createLogger, loadConfig, systemClock, type Config } from '@agentgw/core';
import { openDatabase, type DbHandle } from '@agentgw/db';
import { exitWithStartupError } from '@agentgw/service-kit';
import { reencryptAllSecrets } from '@agentgw/credentials';

/**
 * `pnpm --filter @agentgw/vault reencrypt`: re-seals every sealed secret under the current
 * CREDENTIAL_ENCRYPTION_KEY (older keys come from CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS): user
 * credentials, agents' upstream secrets, tool providers' auth secrets and credential providers'
 * config secrets. Exits 1 when some value could not be opened with any configured key.
 */
let handle: DbHandle;
let config: Config;
try {
  config = loadConfig();
  // Unset DATABASE_URL means the embedded database in the default data directory, as for `gateway start`.
  handle = await openDatabase({ url: config.DATABASE_URL });
} catch (err) {
  exitWithStartupError(err);
}
const logger = createLogger({ level: config.LOG_LEVEL, name: 'vault-reencrypt' });
try {
  const summary = await reencryptAllSecrets({ config, db: handle.db, clock: systemClock, logger });
  let unreadable = 0;
  for (const [kind, report] of Object.entries(summary)) {
    process.stdout.write(`${kind}: re-encrypted ${report.reencrypted}, ${report.unreadable} unreadable\n`);
    unreadable += report.unreadable;
  }
  process.exitCode = unreadable > 0 ? 1 : 0;
} catch (err) {
  console.error(`Re-encryption failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await handle.close();
}
