export { vaultService } from './service.js';
