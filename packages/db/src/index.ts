export * from './schema.js';
export { openDatabase, DEFAULT_DATA_DIR, type DbHandle, type OpenDatabaseOptions } from './connection.js';
export { DatabaseLockedError } from './file-lock.js';
export { migrateToLatest } from './migrate.js';
export { json } from './json.js';
export { isUniqueViolation } from './errors.js';
export { isSameResource, mcpTokenResourceOf } from './mcp-token-resource.js';
