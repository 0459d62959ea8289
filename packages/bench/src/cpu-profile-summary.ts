import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

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

/** The top self-time frames of the largest profile in a directory (the gateway's own process), as text. */
export function summariseProfiles(dir: string, top: number): string {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) return `no .cpuprofile in ${dir}`;
  const largest = files.map((f) => join(dir, f)).sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
  const frames = selfTimes(JSON.parse(readFileSync(largest, 'utf8')) as CpuProfile);
  const busy = frames.filter((f) => f.frame !== '(idle) (native)');
  const busyMs = busy.reduce((s, f) => s + f.selfMs, 0);
  const lines = busy
    .slice(0, top)
    .map(
      (f) => `${f.selfMs.toFixed(0).padStart(7)} ms ${((f.selfMs / busyMs) * 100).toFixed(1).padStart(5)}%  ${f.frame}`,
    );
  const origins = selfTimeByOrigin(JSON.parse(readFileSync(largest, 'utf8')) as CpuProfile)
    .slice(0, top)
    .map((f) => `${f.selfMs.toFixed(0).padStart(7)} ms ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.frame}`);
  return [
    `top ${top} self-time frames of ${largest} (${busyMs.toFixed(0)} ms busy, idle excluded):`,
    ...lines,
    `self time by origin:`,
    ...origins,
  ].join('\n');
}

// `tsx src/cpu-profile-summary.ts <dir> [top]` prints the summary of a profile directory.
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\/src\//, '/src/'))) {
  console.log(summariseProfiles(process.argv[2] ?? '.', Number(process.argv[3] ?? 20)));
}
