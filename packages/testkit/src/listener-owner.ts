import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { processTree } from '@agentgw/core/process-tree';

/**
 * Who holds the listening TCP socket on a loopback port, as Linux's /proc tells it:
 * `ours` (the process `pid` or one of its descendants), `other` (a process outside that tree),
 * `unknown` (no /proc, or no listener found).
 */
export type ListenerOwner = 'ours' | 'other' | 'unknown';

const LISTEN = '0A';

/**
 * Why: a port from freePort() is released before the service binds it, and a test running beside
 * this one can take it in between; its /health then answers for ours (CI's conformance run once
 * sent the admin sign-in to another job's service). Reads /proc/net/tcp{,6} and the tree's fds.
 */
export function listenerOwner(port: number, pid: number): ListenerOwner {
  const inodes = listeningInodes(port);
  if (inodes === null || inodes.size === 0) return 'unknown';
  for (const member of processTree(pid)) {
    for (const inode of socketInodes(member)) if (inodes.has(inode)) return 'ours';
  }
  return 'other';
}

/** The inodes of the sockets listening on `port` (any address), or null where /proc/net is not there. */
function listeningInodes(port: number): Set<string> | null {
  const inodes = new Set<string>();
  let readAny = false;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    readAny = true;
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== LISTEN) continue;
      const local = fields[1]!;
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port) inodes.add(fields[9]!);
    }
  }
  return readAny ? inodes : null;
}

function socketInodes(pid: number): string[] {
  const inodes: string[] = [];
  for (const fd of safeReaddir(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('socket:[')) inodes.push(target.slice(8, -1));
    } catch {
      // closed since the listing
    }
  }
  return inodes;
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
