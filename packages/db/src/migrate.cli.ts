import { openDatabase } from './connection.js';
import { migrateToLatest } from './migrate.js';

const USAGE = `Usage: pnpm --filter @agentgw/db migrate

Brings the database up to date: DATABASE_URL (file:<path> or postgres://...), or unset the
embedded database in .gateway-data/pgdata of the directory the command was typed in.
Takes no arguments; --help prints this and changes nothing.`;

/** `pnpm --filter @agentgw/db migrate`: brings DATABASE_URL's database (default: the embedded one) up to date. */
async function main(args: string[]): Promise<void> {
  // Any argument is a question or a mistake: never migrate on one.
  if (args.length > 0) {
    const help = args.every((a) => a === '--help' || a === '-h');
    (help ? process.stdout : process.stderr).write(
      `${help ? '' : `Unknown argument: ${args.join(' ')}\n\n`}${USAGE}\n`,
    );
    process.exitCode = help ? 0 : 2;
    return;
  }
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

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`migrate: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
