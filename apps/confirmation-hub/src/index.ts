export { confirmationHubService } from './service.js';
