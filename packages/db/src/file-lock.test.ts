import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireFileLock, DatabaseLockedError } from './file-lock.js';

describe('acquireFileLock', () => {
  let dir: string;
  let lockPath: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentgw-lock-'));
    lockPath = join(dir, 'gateway.lock');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const holderPid = () => readFileSync(lockPath, 'utf8').trim();

  it('writes this PID, refuses a second holder, and removes the file on release', () => {
    const lock = acquireFileLock(lockPath, dir);
    expect(holderPid()).toBe(String(process.pid));
    expect(() => acquireFileLock(lockPath, dir)).toThrow(DatabaseLockedError);
    lock.release();
    lock.release();
    expect(existsSync(lockPath)).toBe(false);
    acquireFileLock(lockPath, dir).release();
  });

  it('refuses a lock held by another live process, naming the path, the PID and the lock file', () => {
    const livePid = process.ppid; // the parent outlives this test
    writeFileSync(lockPath, `${livePid}\n`);
    let err: unknown;
    try {
      acquireFileLock(lockPath, '/srv/gateway/pgdata');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DatabaseLockedError);
    expect((err as Error).message).toBe(
      `The database at /srv/gateway/pgdata is in use by another process (PID ${livePid}). A file: database ` +
        `serves one process only: stop that process, or use PostgreSQL to run several. If PID ${livePid} is ` +
        `not a gateway, delete ${lockPath}.`,
    );
    expect(holderPid()).toBe(String(livePid));
  });

  it('takes over a lock whose process is gone', () => {
    const { pid: deadPid } = spawnSync(process.execPath, ['-e', '']);
    writeFileSync(lockPath, `${deadPid}\n`);
    const lock = acquireFileLock(lockPath, dir);
    expect(holderPid()).toBe(String(process.pid));
    lock.release();
  });

  it('takes over a lock with its own PID that it did not take, or with no PID in it', () => {
    // A restarted container often gets the same PID as the process that died holding the lock.
    for (const leftover of [`${process.pid}\n`, '', 'garbage']) {
      writeFileSync(lockPath, leftover);
      const lock = acquireFileLock(lockPath, dir);
      expect(holderPid()).toBe(String(process.pid));
      lock.release();
    }
  });

  it('releases the lock when the process exits without closing', () => {
    const script = `
      import { acquireFileLock } from ${JSON.stringify(join(import.meta.dirname, 'file-lock.ts'))};
      acquireFileLock(${JSON.stringify(lockPath)}, 'db');
      process.exit(0);`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '..'),
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(existsSync(lockPath)).toBe(false);
  });
});
