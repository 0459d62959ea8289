import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/** Another live process has the embedded database open. */
export class DatabaseLockedError extends Error {
  constructor(
    readonly path: string,
    readonly pid: number,
    readonly lockPath: string,
  ) {
    super(
      `The database at ${path} is in use by another process (PID ${pid}). A file: database serves one ` +
        `process only: stop that process, or use PostgreSQL to run several. If PID ${pid} is not a ` +
        `gateway, delete ${lockPath}.`,
    );
    this.name = 'DatabaseLockedError';
  }
}

export interface FileLock {
  release(): void;
}

/** Lock files this process holds, to tell its own lock from one left by an earlier process with the same PID. */
const heldHere = new Set<string>();

/**
 * Exclusive lock on an embedded database directory: a file holding the owner's PID, created
 * atomically (written aside, then hard-linked into place, which fails if it exists). A lock
 * whose process is gone is taken over. Two processes taking over the same stale lock at the
 * same instant could both succeed; that needs a crash and a double start in one moment.
 */
export function acquireFileLock(lockPath: string, databasePath: string): FileLock {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryCreate(lockPath)) return hold(lockPath);
    const holder = readHolder(lockPath);
    if (holder === undefined) continue; // released between our create and read
    if (holder !== null && isAlive(holder, lockPath)) throw new DatabaseLockedError(databasePath, holder, lockPath);
    rmSync(lockPath, { force: true }); // stale: its process is gone
  }
  throw new Error(`Could not lock ${databasePath}: ${lockPath} keeps changing hands`);
}

function hold(lockPath: string): FileLock {
  heldHere.add(lockPath);
  const release = () => {
    if (!heldHere.delete(lockPath)) return;
    process.off('exit', release);
    if (readHolder(lockPath) === process.pid) rmSync(lockPath, { force: true });
  };
  // A process that exits without closing the database leaves no lock behind.
  process.on('exit', release);
  return { release };
}

function tryCreate(lockPath: string): boolean {
  const staged = `${lockPath}.${process.pid}.tmp`;
  writeFileSync(staged, `${process.pid}\n`);
  try {
    linkSync(staged, lockPath);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    rmSync(staged, { force: true });
  }
}

/** The PID of the live process holding the lock at `lockPath`, or null when nobody holds it. */
export function lockHolder(lockPath: string): number | null {
  const holder = readHolder(lockPath);
  return holder && isAlive(holder, lockPath) ? holder : null;
}

/** The holder's PID; null when the file holds no PID, undefined when there is no file. */
function readHolder(lockPath: string): number | null | undefined {
  let text: string;
  try {
    text = readFileSync(lockPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

function isAlive(pid: number, lockPath: string): boolean {
  // Our own PID in a lock we did not take: left by an earlier process (e.g. a restarted container's PID 1).
  if (pid === process.pid) return heldHere.has(lockPath);
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
