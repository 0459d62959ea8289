import { canonicalJson } from '@agentgw/core';

/** One line of a definition diff: kept, only in the pinned definition, or only in the new one. */
export interface DiffLine {
  op: 'same' | 'removed' | 'added';
  text: string;
}

/** Above this many line pairs the diff is not aligned (the whole old text removed, the new added), so a huge definition cannot cost quadratic time. */
const MAX_ALIGNED_CELLS = 1_000_000;

/**
 * A line diff of two tool definitions, each pretty-printed as canonical JSON (keys sorted, so
 * only real changes show), aligned on their longest common subsequence of lines. A null side
 * is empty (a tool never approved: every line added).
 */
export function definitionDiff(before: unknown, after: unknown): DiffLine[] {
  const a = before === null ? [] : canonicalJson(before, 2).split('\n');
  const b = after === null ? [] : canonicalJson(after, 2).split('\n');
  if (a.length * b.length > MAX_ALIGNED_CELLS)
    return [...a.map((text) => line('removed', text)), ...b.map((text) => line('added', text))];
  // common(i, j): length of the longest common subsequence of a[i..] and b[j..] (0 past either end).
  const width = b.length + 1;
  const table = new Uint32Array((a.length + 1) * width);
  const common = (i: number, j: number): number => table[i * width + j] ?? 0;
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--)
      table[i * width + j] = a[i] === b[j] ? common(i + 1, j + 1) + 1 : Math.max(common(i + 1, j), common(i, j + 1));
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  for (;;) {
    const [x, y] = [a[i], b[j]];
    if (x === undefined || y === undefined) break;
    if (x === y) {
      lines.push(line('same', x));
      i++;
      j++;
    } else if (common(i + 1, j) >= common(i, j + 1)) {
      lines.push(line('removed', x));
      i++;
    } else {
      lines.push(line('added', y));
      j++;
    }
  }
  lines.push(...a.slice(i).map((text) => line('removed', text)), ...b.slice(j).map((text) => line('added', text)));
  return lines;
}

const line = (op: DiffLine['op'], text: string): DiffLine => ({ op, text });
