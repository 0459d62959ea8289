import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { originOf } from './cpu-profile-summary.js';

/** The parts of a V8 sampling heap profile (`HeapProfiler.stopSampling`) the summary reads. */
export interface HeapProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapProfileNode[];
}

/** One frame's share of the sampled bytes allocated. */
export interface FrameBytes {
  frame: string;
  bytes: number;
  share: number;
}

/** Bytes allocated per key of a frame, largest first (the tree walked without recursion: hostile depth is not a concern here, deep async stacks are). */
function bytesBy(head: HeapProfileNode, key: (node: HeapProfileNode) => string): FrameBytes[] {
  const totals = new Map<string, number>();
  let sum = 0;
  const stack = [head];
  for (let node = stack.pop(); node; node = stack.pop()) {
    stack.push(...node.children);
    if (node.selfSize === 0) continue;
    const k = key(node);
    totals.set(k, (totals.get(k) ?? 0) + node.selfSize);
    sum += node.selfSize;
  }
  return [...totals.entries()]
    .map(([frame, bytes]) => ({ frame, bytes, share: sum > 0 ? bytes / sum : 0 }))
    .sort((a, b) => b.bytes - a.bytes);
}

/** Bytes allocated per frame (function, origin, line). */
export const bytesPerFrame = (head: HeapProfileNode): FrameBytes[] =>
  bytesBy(
    head,
    ({ callFrame: { functionName, url, lineNumber } }) =>
      `${functionName || '(anonymous)'} ${originOf(url)}${url ? `:${lineNumber + 1}` : ''}`,
  );

/** Bytes allocated per origin: a package, an app or package folder, a node internal, or V8's own name. */
export const bytesPerOrigin = (head: HeapProfileNode): FrameBytes[] =>
  bytesBy(head, ({ callFrame: { functionName, url } }) => {
    if (!url) return functionName || '(native)';
    const origin = originOf(url);
    return /^(apps|packages)\//.test(origin) ? origin.split('/').slice(0, 2).join('/') : origin;
  });

/** What a profile's samples count: every allocation (what the collector freed too), or only what outlived the young generation (`--promoted`). */
export type HeapSampled = 'all' | 'promoted';

/** The top allocating frames and origins of the largest heap profile in a directory (the gateway's own process), as text. */
export function summariseHeapProfiles(dir: string, top: number, sampled: HeapSampled = 'all'): string {
  const files = readdirSync(dir).filter((f) => f.endsWith('.heapprofile'));
  if (files.length === 0) return `no .heapprofile in ${dir}`;
  const largest = files.map((f) => join(dir, f)).sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
  const { head } = JSON.parse(readFileSync(largest, 'utf8')) as { head: HeapProfileNode };
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1).padStart(8);
  const line = (f: FrameBytes) => `${mb(f.bytes)} MB ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.frame}`;
  const frames = bytesPerFrame(head);
  const total = frames.reduce((s, f) => s + f.bytes, 0);
  return [
    `top ${top} allocating frames of ${largest} (${mb(total).trim()} MB sampled, ${sampled === 'all' ? 'freed objects included' : 'only what outlived the young generation'}):`,
    ...frames.slice(0, top).map(line),
    'allocated by origin:',
    ...bytesPerOrigin(head).slice(0, top).map(line),
  ].join('\n');
}
