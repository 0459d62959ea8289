import type { Clock, Consumer, GatewayJobs, JobQueue, Logger } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import type { PushSender } from './push-sender.js';

export interface PushDeliveryDeps {
  db: Kysely<Database>;
  queue: JobQueue;
  clock: Clock;
  logger: Logger;
}

type PushJob = GatewayJobs['push'];

/**
 * A user's push job fans out into one job per active device, so each delivery is retried on
 * its own (with the queue's exponential backoff) and a device that already has it is not
 * notified twice.
 */
async function fanOut(deps: PushDeliveryDeps, senders: PushSender[], job: PushJob): Promise<void> {
  const platforms = senders.flatMap((s) => s.platforms);
  if (platforms.length === 0) return;
  const devices = await deps.db
    .selectFrom('devices')
    .select('id')
    .where('user_id', '=', job.userId)
    .where('is_active', '=', true)
    .where('platform', 'in', platforms)
    .execute();
  const key = typeof job.data.confirmationId === 'string' ? `push:${job.data.confirmationId}` : null;
  for (const device of devices) {
    await deps.queue.enqueue('push', { ...job, deviceId: device.id }, key ? { jobId: `${key}:${device.id}` } : {});
  }
}

/** One device: delivered, or retired when the service calls its token dead; a transient failure throws (retry). */
async function deliver(
  deps: PushDeliveryDeps,
  senders: PushSender[],
  job: PushJob & { deviceId: string },
): Promise<void> {
  const device = await deps.db
    .selectFrom('devices')
    .select(['id', 'platform', 'push_token'])
    .where('id', '=', job.deviceId)
    .where('user_id', '=', job.userId)
    .where('is_active', '=', true)
    .executeTakeFirst();
  if (!device) return; // removed or deactivated since
  const sender = senders.find((s) => s.platforms.includes(device.platform));
  if (!sender) return;
  const result = await sender.send(device.push_token, { title: job.title, body: job.body, data: job.data });
  if (result.ok) return;
  // Only this token: a re-registration since then keeps its device active.
  await deps.db
    .updateTable('devices')
    .set({ is_active: false, updated_at: deps.clock.now() })
    .where('id', '=', device.id)
    .where('push_token', '=', device.push_token)
    .execute();
  deps.logger.info(
    { deviceId: device.id, service: sender.name, reason: result.reason },
    'push token rejected; device deactivated',
  );
}

/** Consumes `push` jobs with the configured senders (none: jobs are acknowledged and dropped). */
export function consumePushJobs(deps: PushDeliveryDeps, senders: PushSender[]): Promise<Consumer> {
  return deps.queue.consume(
    'push',
    async (jobs) => {
      for (const job of jobs) {
        if (job.deviceId === undefined) await fanOut(deps, senders, job);
        else await deliver(deps, senders, { ...job, deviceId: job.deviceId });
      }
    },
    { batchSize: 1, concurrency: 8 },
  );
}
