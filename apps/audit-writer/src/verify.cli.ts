import { parseArgs } from 'node:util';
import { openDatabase } from '@agentgw/db';
import { NO_TENANT_KEY } from './chain.js';
import { verifyAll } from './verify.js';

const label = (tenantKey: string) => (tenantKey === NO_TENANT_KEY ? '(no tenant)' : `'${tenantKey}'`);

/**
 * `pnpm --filter @agentgw/audit-writer verify [--tenant X]`: checks the audit hash chains of
 * DATABASE_URL's database (default: the embedded one) and names the first broken link's row.
 * Exit 0 when intact, 1 when broken, 2 when it could not check.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({ options: { tenant: { type: 'string' } }, strict: true });
  if (process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);
  const handle = await openDatabase({ url: process.env.DATABASE_URL?.trim() || undefined });
  try {
    const reports = await verifyAll(handle.db, values.tenant);
    let broken = false;
    for (const r of reports) {
      if (!r.broken) {
        process.stdout.write(`audit chain ${label(r.tenantKey)}: ok, ${r.links} links\n`);
        continue;
      }
      broken = true;
      const b = r.broken;
      const where = b.seq === undefined ? '' : ` at link ${b.seq}`;
      process.stdout.write(
        `audit chain ${label(r.tenantKey)}: BROKEN${where}: row ${b.auditId}: ${b.reason} (${r.links} links verified before it)\n`,
      );
    }
    if (reports.length === 0) process.stdout.write('audit chain: no audit entries\n');
    return broken ? 1 : 0;
  } finally {
    await handle.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`verify: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 2;
  },
);
