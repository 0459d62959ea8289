export { createMcpGateway, mcpGatewayService, NO_CONFIRMATION_HUB, refusingConfirmationGate, type McpGatewayOptions } from './service.js';
