import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATION_NAMES } from './migrations/index.js';

const packageDir = join(import.meta.dirname, '..');

/** Runs the migrate command the way `pnpm --filter @agentgw/db migrate` does, from `cwd`. */
function migrate(cwd: string, databaseUrl?: string, args: string[] = []) {
  const env: NodeJS.ProcessEnv = { ...process.env, INIT_CWD: cwd };
  if (databaseUrl === undefined) delete env.DATABASE_URL;
  else env.DATABASE_URL = databaseUrl;
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/migrate.cli.ts', ...args], {
    cwd: packageDir,
    env,
    encoding: 'utf8',
  });
}

describe('the migrate command', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentgw-migrate-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('migrates the default database of the directory it was started in, then has nothing to do', () => {
    const first = migrate(dir);
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe(MIGRATION_NAMES.map((name) => `pglite: applied ${name}\n`).join(''));
    expect(first.status).toBe(0);

    const second = migrate(dir, `file:${join('.gateway-data', 'pgdata')}`);
    expect(second.stdout).toBe('pglite: already up to date\n');
    expect(second.status).toBe(0);
  });

  it('answers --help with its usage and an unknown argument with exit 2, migrating nothing either way', () => {
    const help = migrate(dir, undefined, ['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: pnpm --filter @agentgw/db migrate');
    const wrong = migrate(dir, undefined, ['--dry-run']);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('Unknown argument: --dry-run');
    expect(existsSync(join(dir, '.gateway-data'))).toBe(false);
  });

  it('exits non-zero with one line and no stack trace on failure', () => {
    const run = migrate(dir, 'postgres://postgres:secret@127.0.0.1:1/none');
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('migrate: Could not migrate the database: connect ECONNREFUSED 127.0.0.1:1\n');
  });
});
