export { vaultPublicService, vaultService } from './service.js';
