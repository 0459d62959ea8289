export { createGatewayHost, gatewayServices } from './all-in-one.js';
export type { GatewayHostOptions } from './all-in-one.js';
export { startGateway } from './gateway.js';
export type { GatewayOptions, RunningGateway } from './gateway.js';
