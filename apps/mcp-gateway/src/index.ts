export { createApp } from './app.js';
export { mcpGatewayService } from './service.js';
