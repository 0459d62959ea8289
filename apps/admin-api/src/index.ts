export { adminApiService } from './service.js';
export { ensureBootstrapAdmin } from './bootstrap-admin.js';
// The gateway CLI manages admin accounts with the same functions the API uses.
export { createUserAccount, listUsers } from './users.js';
export type { User } from './users.js';
