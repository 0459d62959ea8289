import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { migrateToLatest, openDatabase } from '@agentgw/db';
import { validateJob } from '../src/audit-job.js';
import { writeBatch } from '../src/batch-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'awb-'));
const h = await openDatabase({ url: `file:${dir}/pg` });
await migrateToLatest(h.db);
const mk = () => {
  const id = randomUUID();
  return validateJob({ op: 'create', id, key: `c:${id}`, seq: 1, at: new Date().toISOString(), userId: null, agentId: 'agent_x', endUserId: null, providerId: 'prov_1', tenantId: null, toolName: 'echo', arguments: { text: 'hello world' }, status: 'completed', result: { content: [{ type: 'text', text: 'hello world' }] }, duration: 3 });
};
const BATCH = Number(process.env.B ?? 100), ROUNDS = Number(process.env.R ?? 60);
const T = ((globalThis as any).T = new Map<string, number>());
let t0 = 0;
for (let r = 0; r < ROUNDS + 10; r++) {
  if (r === 10) { t0 = performance.now(); T.clear(); }
  const jobs = Array.from({ length: BATCH }, () => { const j = mk(); if (!j.ok) throw new Error(j.reason); return j.value; });
  await writeBatch(h.db, jobs);
}
const ms = performance.now() - t0;
console.log(process.env.V ?? 'base', 'batch', BATCH, 'per row ms', (ms / (ROUNDS * BATCH)).toFixed(4));
for (const [k, v] of T) console.log('  ', k.padEnd(12), (v / (ROUNDS * BATCH)).toFixed(4));
await h.close();
