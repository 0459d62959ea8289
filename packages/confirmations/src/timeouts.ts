import type { Consumer } from '@agentgw/core';
import { timeOutConfirmation, type ConfirmationDeps } from './decisions.js';

/**
 * Runs the `confirmation-timeout` jobs: each times out its confirmation if it is still pending
 * (a decided one is left alone). Whichever replica consumes the job, the held call hears the
 * resolution over the bus.
 */
export function consumeConfirmationTimeouts(deps: ConfirmationDeps): Promise<Consumer> {
  return deps.queue.consume(
    'confirmation-timeout',
    async (jobs) => {
      for (const job of jobs) await timeOutConfirmation(deps, job.confirmationId);
    },
    { batchSize: 1, concurrency: 4 },
  );
}
