export { createGatewayApp } from './all-in-one.js';
export { startGateway } from './gateway.js';
export type { GatewayOptions, RunningGateway } from './gateway.js';
