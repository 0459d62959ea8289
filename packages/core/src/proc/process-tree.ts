import { readdirSync, readFileSync } from 'node:fs';

/** Fields of a /proc stat file (`<pid>` or `<pid>/task/<tid>`) after the command name (which may hold spaces and parentheses): state(0) ppid(1) … */
export function statFields(entry: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** A process and every descendant still alive (Linux /proc): `pnpm start` runs the gateway a few processes down. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const fields = statFields(pid);
    if (!fields) continue;
    const ppid = Number(fields[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const tree: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    if (!statFields(pid)) continue;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}
