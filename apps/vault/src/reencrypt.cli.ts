import { createLogger, systemClock, type Config } from '@agentgw/core';
import { openDatabase, type DbHandle } from '@agentgw/db';
import { ALL_KEYS, exitWithStartupError, loadConfigWithKeys } from '@agentgw/service-kit';
import { reencryptAllSecrets } from '@agentgw/credentials';

/**
 * `pnpm --filter @agentgw/vault reencrypt`: re-seals every sealed secret under the current key of
 * its ring: user credentials under CREDENTIAL_ENCRYPTION_KEY; agents' upstream secrets, tool
 * providers' auth secrets and credential providers' config secrets under PLATFORM_SECRETS_KEY
 * (including those still under the credential key's old subkey). Older keys come from the
 * *_PREVIOUS_KEYS variables; it needs both keys. Exits 1 when some value no configured key opens.
 */
let handle: DbHandle;
let config: Config;
try {
  config = loadConfigWithKeys('reencrypt', ALL_KEYS);
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
