export { createApp } from './app.js';
export { auditWriterService } from './service.js';
