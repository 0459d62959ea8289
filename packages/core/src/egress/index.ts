export * from './addresses.js';
export * from './policy.js';
export * from './dispatcher.js';
export * from './exchange.js';
