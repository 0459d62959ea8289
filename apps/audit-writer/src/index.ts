export { auditWriterService } from './service.js';
