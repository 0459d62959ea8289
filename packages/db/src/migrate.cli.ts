import { openDatabase } from './connection.js';
import { migrateToLatest } from './migrate.js';

/** `pnpm --filter @agentgw/db migrate`: brings DATABASE_URL's database (default: the embedded one) up to date. */
async function main(): Promise<void> {
  // pnpm runs scripts inside packages/db; relative paths (file:./x, the default data dir) mean
  // the directory the command was typed in.
  if (process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);
  const handle = await openDatabase({ url: process.env.DATABASE_URL?.trim() || undefined });
  try {
    const applied = await migrateToLatest(handle.db);
    process.stdout.write(
      applied.length === 0
        ? `${handle.kind}: already up to date\n`
        : applied.map((name) => `${handle.kind}: applied ${name}\n`).join(''),
    );
  } finally {
    await handle.close();
  }
}

main().catch((err: unknown) => {
  console.error(`migrate: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
