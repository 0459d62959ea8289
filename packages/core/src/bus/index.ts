export type { EventHandler, Unsubscribe, EventBus } from './event-bus.js';
export { MemoryEventBus } from './memory.js';
export { RedisEventBus } from './redis.js';
