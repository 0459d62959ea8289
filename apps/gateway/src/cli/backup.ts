import { backupEmbeddedDatabase, restoreEmbeddedDatabase } from '@agentgw/db';
import { resolve } from 'node:path';
import { databaseUrlOf, embeddedDatabasePath, readEnvironment, type EnvironmentInput } from '../environment.js';

const KEYS_NOTE =
  'The archive holds the database only: keep the keys it was written under (JWT_SECRET, CREDENTIAL_ENCRYPTION_KEY, ' +
  'PLATFORM_SECRETS_KEY: secrets.json in the data directory, or your environment) with it, apart from it.';

/** The embedded database's directory, or null (with the reason printed) when DATABASE_URL names PostgreSQL. */
function embeddedPath(input: EnvironmentInput): string | null {
  const { env, dataDir } = readEnvironment(input);
  const url = databaseUrlOf(env);
  if (url === undefined) return embeddedDatabasePath(dataDir);
  if (url.startsWith('file:')) return resolve(input.cwd, url.slice('file:'.length));
  console.error(
    'DATABASE_URL names PostgreSQL: back it up with pg_dump and restore with pg_restore (README, "Backup").',
  );
  return null;
}

/** `gateway backup [--out FILE]`: the embedded database (gateway stopped) into one gzipped archive. */
export async function backupCommand(input: EnvironmentInput, out: string | undefined): Promise<number> {
  const path = embeddedPath(input);
  if (path === null) return 2;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const archive = resolve(input.cwd, out ?? `gateway-backup-${stamp}.tar.gz`);
  const { bytes } = await backupEmbeddedDatabase(path, archive);
  console.log(`Backed up ${path} to ${archive} (${bytes} bytes, owner-only).\n${KEYS_NOTE}`);
  return 0;
}

/** `gateway restore FILE`: an archive of `gateway backup` into a data directory that holds no database yet. */
export async function restoreCommand(input: EnvironmentInput, archive: string | undefined): Promise<number> {
  if (!archive) {
    console.error('gateway restore needs the archive: gateway restore FILE [--data-dir DIR]');
    return 2;
  }
  const path = embeddedPath(input);
  if (path === null) return 2;
  await restoreEmbeddedDatabase(resolve(input.cwd, archive), path);
  console.log(`Restored ${path} from ${archive}. Start the gateway with the keys the backup was written under.`);
  return 0;
}
