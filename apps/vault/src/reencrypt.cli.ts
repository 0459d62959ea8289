import { createLogger, loadConfig, systemClock, type Config } from '@agentgw/core';
import { openDatabase, type DbHandle } from '@agentgw/db';
import { exitWithStartupError } from '@agentgw/service-kit';
import { reencryptAll } from './vault.js';

/**
 * `pnpm --filter @agentgw/vault reencrypt`: rewrites every vault entry under the current
 * CREDENTIAL_ENCRYPTION_KEY (older keys come from CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS).
 * Exits 1 when some rows could not be opened with any configured key.
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
  const report = await reencryptAll({ config, db: handle.db, clock: systemClock, logger });
  process.stdout.write(`re-encrypted ${report.reencrypted} credential(s); ${report.unreadable} unreadable\n`);
  process.exitCode = report.unreadable > 0 ? 1 : 0;
} catch (err) {
  console.error(`Re-encryption failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await handle.close();
}
