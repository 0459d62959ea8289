import {
  consumeConfirmationRetention,
  consumeConfirmationTimeouts,
  rejectIfAgentInactive,
} from '@agentgw/confirmations';
import type { Consumer, Unsubscribe } from '@agentgw/core';
import { defineService, openApiApp } from '@agentgw/service-kit';
import { confirmationRoutes } from './confirmations.routes.js';
import { EventStreams } from './event-streams.js';
import { pushSendersFromConfig } from './push/push-config.js';
import { consumePushJobs } from './push/push-delivery.js';
import { streamRoutes } from './stream.routes.js';

/**
 * confirmation-hub: the confirmation routes, the live SSE stream of every replica (fed by the
 * bus, whichever replica raised an event), the deadline jobs of held calls and push delivery;
 * it ends the confirmations of an agent that is disabled or deleted.
 */
export const confirmationHubService = defineService({
  name: 'confirmation-hub',
  defaultPort: 7605,
  create: (deps) => {
    const streams = new EventStreams({
      heartbeatMs: deps.config.SSE_HEARTBEAT_MS,
      clock: deps.clock,
      logger: deps.logger,
    });
    // A half-configured push service stops start-up here, naming the variables.
    const senders = pushSendersFromConfig(deps.config, deps.clock);
    deps.metrics?.gauge('agentgw_sse_clients', 'Open SSE streams on this replica', () => streams.size);
    deps.metrics?.gauge(
      'agentgw_confirmations_held',
      'Calls held for a decision (pending confirmations, all replicas)',
      async () => {
        const row = await deps.db
          .selectFrom('confirmations')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('status', '=', 'pending')
          .executeTakeFirst();
        return Number(row?.n ?? 0);
      },
    );
    const routes = openApiApp();
    routes.route('/api/v1/confirmation', confirmationRoutes(deps));
    routes.route('/api/v1/stream', streamRoutes(deps, streams));

    const unsubscribes: Unsubscribe[] = [];
    const consumers: Consumer[] = [];
    return {
      routes,
      async start() {
        unsubscribes.push(
          await deps.bus.subscribe('confirmation.required', (payload) => streams.deliverRequired(payload)),
          await deps.bus.subscribe('confirmation.resolved', (event) => streams.deliverResolved(event)),
          await deps.bus.subscribe('tool_pins.changed', (event) => streams.deliverToolPin(event)),
          // A changed or deleted user's streams end at once; a reconnect authenticates again.
          await deps.bus.subscribe('user.changed', ({ userId }) => streams.closeUser(userId)),
          // The kill switch reaches held calls: a disabled or deleted agent's confirmations are rejected.
          await deps.bus.subscribe(
            'agent.changed',
            async ({ agentId }) => void (await rejectIfAgentInactive(deps, agentId)),
          ),
        );
        consumers.push(await consumeConfirmationTimeouts(deps), await consumePushJobs(deps, senders));
        const retention = await consumeConfirmationRetention(deps, deps.config.CONFIRMATION_RETENTION_DAYS);
        if (retention) consumers.push(retention);
        streams.start();
      },
      async stop({ deadlineMs }) {
        streams.stop();
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, deadlineMs);
        });
        await Promise.race([
          Promise.all([...unsubscribes.splice(0).map((u) => u()), ...consumers.splice(0).map((c) => c.close())]),
          late,
        ]);
        clearTimeout(timer);
        await Promise.all(senders.map((s) => s.close()));
      },
    };
  },
});
