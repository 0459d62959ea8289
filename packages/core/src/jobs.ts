import type { z } from 'zod';
import type { auditRecordJobSchema, jobCatalog } from './job-catalog.js';

/** Work that must not be lost, carried by the JobQueue (BullMQ, or in-process): each job's data, derived from the catalog. */
export type GatewayJobs = { [J in keyof typeof jobCatalog]: z.infer<(typeof jobCatalog)[J]> };

/** The name of a queue. */
export type JobName = keyof GatewayJobs;

/** One record of an `audit-bulk` job: `{ op: 'create', …every field }` or `{ op: 'update', id, patch }`. */
export type AuditRecordJob = z.infer<typeof auditRecordJobSchema>;
