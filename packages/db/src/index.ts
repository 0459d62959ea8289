export * from './schema.js';
export { openDatabase, DEFAULT_DATA_DIR, LOCK_FILE, type DbHandle, type OpenDatabaseOptions } from './connection.js';
export { DatabaseLockedError, lockHolder } from './file-lock.js';
export { backupEmbeddedDatabase, restoreEmbeddedDatabase } from './embedded-backup.js';
export { migrateToLatest } from './migrate.js';
export { json } from './json.js';
export { isUniqueViolation } from './errors.js';
export { checkSealingKeys, KeyMismatchError, type HeldKey } from './key-checks.js';
export { isSameResource, mcpTokenResourceOf } from './mcp-token-resource.js';
