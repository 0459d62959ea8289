import { defineService } from '@agentgw/service-kit';
import { Hono } from 'hono';

/** confirmation-hub: confirmations, live SSE events and push delivery. */
export const confirmationHubService = defineService({
  name: 'confirmation-hub',
  defaultPort: 7605,
  create: () => ({ routes: new Hono() }),
});
