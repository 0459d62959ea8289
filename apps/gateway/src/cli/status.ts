import { ConfigError } from '@agentgw/core';
import { LOCK_FILE, lockHolder, openDatabase } from '@agentgw/db';
import { ALL_KEYS, loadConfigWithKeys } from '@agentgw/service-kit';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  generateSecrets,
  missingSecrets,
  readStoredSecrets,
  type SecretVariable,
  type Secrets,
} from '../dev-secrets.js';
import {
  databaseUrlOf,
  DEFAULT_PORT,
  embeddedDatabasePath,
  readEnvironment,
  type Env,
  type EnvironmentInput,
} from '../environment.js';
import { DEFAULT_HOST } from '../listen-address.js';
import { probeRunningGateway } from './running-gateway.js';

/**
 * `gateway status`: what the gateway would run with (secrets hidden), whether that
 * configuration is valid, and whether the database answers. Exit 1 when either is not so.
 */
export async function statusCommand(input: EnvironmentInput): Promise<number> {
  const { env, dataDir, envFile } = readEnvironment(input);
  const production = env.NODE_ENV === 'production';
  const stored = production ? null : readStoredSecrets(dataDir);

  const secretState = (name: SecretVariable): string => {
    if (env[name]?.trim()) return 'set (hidden)';
    if (stored?.[name]) return 'from secrets.json (hidden)';
    return production ? 'MISSING (required in production)' : 'not set (generated on first start)';
  };
  const rows: [string, string][] = [
    ['config file', envFile ?? '(none; environment only)'],
    ['data dir', dataDir],
    ['NODE_ENV', env.NODE_ENV ?? 'development (default)'],
    ['PORT', env.PORT ?? `${DEFAULT_PORT} (default)`],
    ['HOST', env.HOST ?? `${DEFAULT_HOST} (default: loopback only)`],
    ['DATABASE_URL', describeDatabaseUrl(env.DATABASE_URL, dataDir)],
    ['REDIS_URL', env.REDIS_URL ? maskUrl(env.REDIS_URL) : '(unset: in-process events and queues)'],
    ['JWT_SECRET', secretState('JWT_SECRET')],
    ['CREDENTIAL_ENCRYPTION_KEY', secretState('CREDENTIAL_ENCRYPTION_KEY')],
    ['PLATFORM_SECRETS_KEY', secretState('PLATFORM_SECRETS_KEY')],
    ['ADMIN_EMAIL', env.ADMIN_EMAIL ?? '(unset)'],
    ['GATEWAY_PUBLIC_URL', env.GATEWAY_PUBLIC_URL ?? '(unset: derived from a loopback HOST and a fixed PORT)'],
  ];

  let healthy = true;
  // Secrets that start would generate must not make status fail; everything else is checked as start would.
  const fillIns: Partial<Secrets> = production ? {} : { ...generateSecrets(), ...stored };
  const checked = { ...env };
  for (const name of missingSecrets(env)) checked[name] = fillIns[name];
  let port = DEFAULT_PORT;
  try {
    port = loadConfigWithKeys('the gateway', ALL_KEYS, checked).PORT ?? DEFAULT_PORT;
    rows.push(['configuration', 'valid']);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    healthy = false;
    rows.push(['configuration', err.problems.map((p) => `${p.variable} ${p.message}`).join('; ')]);
  }

  const database = await checkDatabase(env, dataDir, port);
  if (database.startsWith('down')) healthy = false;
  rows.push(['database', database]);

  const width = Math.max(...rows.map(([k]) => k.length));
  console.log('Agent Gateway status');
  for (const [key, value] of rows) console.log(`  ${key.padEnd(width)}  ${value}`);
  return healthy ? 0 : 1;
}

async function checkDatabase(env: Env, dataDir: string, port: number): Promise<string> {
  let url: string | undefined;
  try {
    url = databaseUrlOf(env);
  } catch {
    return 'down (invalid DATABASE_URL)';
  }
  const embedded =
    url === undefined ? embeddedDatabasePath(dataDir) : url.startsWith('file:') ? resolve(url.slice(5)) : null;
  if (embedded !== null) {
    if (!existsSync(join(embedded, 'PG_VERSION'))) return 'not created yet (created on first start)';
    // A running gateway holds this database's lock: ask it rather than open the files twice,
    // and only it (a gateway on PORT may be another instance with another data directory).
    const holder = lockHolder(join(embedded, LOCK_FILE));
    if (holder !== null) {
      const running = await probeRunningGateway(port);
      return running
        ? `${running.checks.database} (reported by the gateway running on port ${port}, process ${holder})`
        : `in use by process ${holder} (a running gateway, not answering on port ${port})`;
    }
  }
  try {
    const handle = await openDatabase({ url, dataDir });
    try {
      return (await handle.ping()) ? 'ok' : 'down (no answer)';
    } finally {
      await handle.close();
    }
  } catch (err) {
    return `down (${err instanceof Error ? err.message : String(err)})`;
  }
}

function describeDatabaseUrl(url: string | undefined, dataDir: string): string {
  if (!url) return `${embeddedDatabasePath(dataDir)} (embedded, default)`;
  if (url.startsWith('file:')) return `${url} (embedded)`;
  return `${maskUrl(url)} (PostgreSQL)`;
}

/** A URL with its password replaced, so status output can be pasted into an issue. */
function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(not a valid URL)';
  }
}
