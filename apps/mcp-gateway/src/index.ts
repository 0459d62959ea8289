export { createMcpGateway, mcpGatewayService, type McpGatewayOptions } from './service.js';
export { NO_CONFIRMATION_HUB, refusingConfirmationGate } from './refusing-confirmation-gate.js';
