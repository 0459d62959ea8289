export { createApp } from './app.js';
export { confirmationHubService } from './service.js';
