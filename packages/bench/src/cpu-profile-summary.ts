import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { engineFunctionNames } from './wasm-function-names.js';

/** The parts of a V8 `.cpuprofile` (written by `node --cpu-prof`) the summary reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[];
  samples: number[];
  timeDeltas: number[];
}

/** One frame's share of the profile's self time. */
export interface FrameTime {
  frame: string;
  selfMs: number;
  share: number;
}

/** Where a script URL belongs: `pkg@version` under node_modules, `packages/x`/`apps/x` in the repo, `node:` internals. */
export function originOf(url: string): string {
  if (!url) return '(native)';
  if (url.startsWith('node:')) return url;
  const inModules = /node_modules\/\.pnpm\/([^/]+)\//.exec(url) ?? /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (inModules) return inModules[1]!;
  const inRepo = /\/((?:apps|packages)\/[^/]+\/.*)$/.exec(url);
  return inRepo ? inRepo[1]! : url.replace(/^file:\/\//, '');
}

/** Self time per frame (function, origin, line), largest first; `(idle)` and `(program)` stay in as V8 names them. */
export function selfTimes(profile: CpuProfile): FrameTime[] {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let sum = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const node = byNode.get(id);
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    const frame = `${functionName || '(anonymous)'} ${originOf(url)}${url ? `:${lineNumber + 1}` : ''}`;
    totals.set(frame, (totals.get(frame) ?? 0) + delta);
    sum += delta;
  });
  return [...totals.entries()]
    .map(([frame, us]) => ({ frame, selfMs: us / 1000, share: sum > 0 ? us / sum : 0 }))
    .sort((a, b) => b.selfMs - a.selfMs);
}

/** Self time per origin (package, app, node internal, `(garbage collector)`…): where the time goes, wasm included. */
export function selfTimeByOrigin(profile: CpuProfile): FrameTime[] {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let sum = 0;
  profile.samples.forEach((id, i) => {
    const node = byNode.get(id);
    if (!node || node.callFrame.functionName === '(idle)') return;
    const { url, functionName } = node.callFrame;
    const origin = originOf(url);
    const key = url.startsWith('wasm://')
      ? 'wasm (the embedded database engine)'
      : !url
        ? functionName
        : /^(apps|packages)\//.test(origin)
          ? origin.split('/').slice(0, 2).join('/')
          : origin;
    const delta = profile.timeDeltas[i] ?? 0;
    totals.set(key, (totals.get(key) ?? 0) + delta);
    sum += delta;
  });
  return [...totals.entries()]
    .map(([frame, us]) => ({ frame, selfMs: us / 1000, share: sum > 0 ? us / sum : 0 }))
    .sort((a, b) => b.selfMs - a.selfMs);
}

/** Frame times of several profiles added up frame by frame (a worker's profile comes in segments), largest first. */
export function mergeFrameTimes(lists: readonly FrameTime[][]): FrameTime[] {
  const totals = new Map<string, number>();
  for (const list of lists) for (const f of list) totals.set(f.frame, (totals.get(f.frame) ?? 0) + f.selfMs);
  const busy = [...totals.entries()].filter(([frame]) => !frame.startsWith('(idle)'));
  const sum = busy.reduce((s, [, ms]) => s + ms, 0);
  return busy
    .map(([frame, selfMs]) => ({ frame, selfMs, share: sum > 0 ? selfMs / sum : 0 }))
    .sort((a, b) => b.selfMs - a.selfMs);
}

const line = (f: FrameTime, share: number) =>
  `${f.selfMs.toFixed(0).padStart(7)} ms ${(share * 100).toFixed(1).padStart(5)}%  ${f.frame}`;

/** A thread's top frames and its time by origin, as text; idle excluded from the shares. */
function threadSummary(title: string, frames: FrameTime[], origins: FrameTime[], top: number): string[] {
  const busy = frames.filter((f) => !f.frame.startsWith('(idle)'));
  const busyMs = busy.reduce((s, f) => s + f.selfMs, 0);
  return [
    `${title} (${busyMs.toFixed(0)} ms busy, idle excluded):`,
    ...busy.slice(0, top).map((f) => line(f, busyMs > 0 ? f.selfMs / busyMs : 0)),
    `self time by origin:`,
    ...origins.slice(0, top).map((f) => line(f, f.share)),
  ];
}

/** `wasm-function[N]` frames given their function's name where the module tells it (`memcmp (wasm-function[13497])`). */
export function nameWasmFrames(frames: FrameTime[], names: ReadonlyMap<number, string>): FrameTime[] {
  return frames.map((f) => {
    const index = /^wasm-function\[(\d+)\] wasm:/.exec(f.frame)?.[1];
    const name = index === undefined ? undefined : names.get(Number(index));
    return name === undefined ? f : { ...f, frame: `${name} (wasm-function[${index}])` };
  });
}

const readProfile = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;

/**
 * The top self-time frames of the largest main-thread profile in a directory (the gateway's own
 * process), as text; then its worker threads' (the embedded database's), their segments merged.
 */
export function summariseProfiles(dir: string, top: number): string {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const mains = files.filter((f) => !f.startsWith('worker-')).map((f) => join(dir, f));
  if (mains.length === 0) return `no .cpuprofile in ${dir}`;
  const largest = mains.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
  const main = readProfile(largest);
  const lines = threadSummary(
    `top ${top} self-time frames of ${largest}`,
    selfTimes(main),
    selfTimeByOrigin(main),
    top,
  );
  const pid = /-(\d+)\.cpuprofile$/.exec(largest)?.[1];
  const segments = files.filter((f) => f.startsWith(`worker-${pid}-`)).map((f) => readProfile(join(dir, f)));
  if (segments.length > 0) {
    lines.push(
      ...threadSummary(
        `its worker threads, ${segments.length} profile segments merged: top ${top} self-time frames`,
        nameWasmFrames(mergeFrameTimes(segments.map(selfTimes)), engineFunctionNames()),
        mergeFrameTimes(segments.map(selfTimeByOrigin)),
        top,
      ),
    );
  }
  return lines.join('\n');
}

// `tsx src/cpu-profile-summary.ts <dir> [top]` prints the summary of a profile directory.
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\/src\//, '/src/'))) {
  console.log(summariseProfiles(process.argv[2] ?? '.', Number(process.argv[3] ?? 20)));
}
