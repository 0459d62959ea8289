export type { EnqueueOptions, ConsumeOptions, JobHandler, Consumer, JobQueue } from './job-queue.js';
export { JobBatchFailures } from './batch-failures.js';
export { MemoryJobQueue } from './memory.js';
export { BullJobQueue, bullKeyPrefix } from './bullmq.js';
