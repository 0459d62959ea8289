import { existsSync, readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

/** Why: V8 prints each function it hands to TurboFan, its script and start offset (node 20–24). */
export const OPT_TRACE_FLAGS = ['--trace-opt', '--print-opt-source'] as const;

/** One TurboFan job of a function: where it starts in its script and V8's name for it. */
export interface Optimised {
  script: string;
  start: number;
  name: string;
}

// `--- FUNCTION SOURCE (<script>:<name>) id{<job>,<inlined>} start{<offset>} ---`; inlined -1 is the
// function the job compiles, other values the functions inlined into it. A script path may hold
// `:`, a function's debug name does not.
const FUNCTION_SOURCE = /^--- FUNCTION SOURCE \((.*):([^:]*)\) id\{\d+,-1\} start\{(\d+)\} ---$/;

/** Why: one line of `--print-opt-source` output read as the function a TurboFan job compiles, or not. */
export function parseOptimised(line: string): Optimised | undefined {
  const match = FUNCTION_SOURCE.exec(line);
  if (match === null) return undefined;
  return { script: match[1]!, name: match[2]!, start: Number(match[3]) };
}

/** A function's TurboFan jobs counted while the window was open. */
export interface Churning extends Optimised {
  count: number;
}

/**
 * Why: a function V8 compiles again and again under a steady load (each time it is made anew, say)
 * costs a helper thread's CPU on every round and shows in no CPU profile's self time; counting the
 * jobs per function in a measured window names it.
 */
export class OptChurn {
  private counting = false;
  private readonly jobs = new Map<string, Churning>();

  constructor(stdout: Readable) {
    createInterface({ input: stdout, crlfDelay: Infinity }).on('line', (line: string) => this.take(line));
  }

  /** Counts from now on, forgetting what came before (start-up and warm-up compile everything once). */
  open(): void {
    this.jobs.clear();
    this.counting = true;
  }

  close(): void {
    this.counting = false;
  }

  /** All jobs counted, and the functions compiled at least `atLeast` times, most first. */
  report(atLeast: number): { total: number; churning: Churning[] } {
    const all = [...this.jobs.values()];
    const total = all.reduce((sum, job) => sum + job.count, 0);
    return { total, churning: all.filter((job) => job.count >= atLeast).sort((a, b) => b.count - a.count) };
  }

  private take(line: string): void {
    if (!this.counting) return;
    const job = parseOptimised(line);
    if (job === undefined) return;
    const key = `${job.script}\u0000${job.start}`;
    const seen = this.jobs.get(key);
    if (seen === undefined) this.jobs.set(key, { ...job, count: 1 });
    else seen.count += 1;
  }
}

interface Script {
  lineStarts: number[];
  map: SourceMap | undefined;
  mapDir: string;
}

/**
 * Why: a bundle's offsets mean nothing to a reader; through the bundle's `.map` (when it has one)
 * a function's start reads as the file and line it was written at, relative to the repository.
 */
export class ScriptLocator {
  private readonly scripts = new Map<string, Script | undefined>();

  constructor(private readonly root: string) {}

  /** `path:line` of the function's start: the original source's when a map covers it, else the script's. */
  locate(at: Optimised): string {
    const path = at.script.startsWith('file:') ? fileURLToPath(at.script) : at.script;
    const script = this.script(path);
    if (script === undefined) return `${at.script}@${at.start}`;
    const line = lastAtOrBefore(script.lineStarts, at.start);
    const column = at.start - script.lineStarts[line]!;
    const entry = script.map?.findEntry(line, column);
    if (entry !== undefined && 'originalSource' in entry) {
      const source = entry.originalSource.startsWith('file:')
        ? fileURLToPath(entry.originalSource)
        : resolve(script.mapDir, entry.originalSource);
      return `${relative(this.root, source)}:${entry.originalLine + 1}`;
    }
    return `${relative(this.root, path)}:${line + 1}`;
  }

  private script(path: string): Script | undefined {
    if (this.scripts.has(path)) return this.scripts.get(path);
    const script = existsSync(path) ? readScript(path) : undefined;
    this.scripts.set(path, script);
    return script;
  }
}

function readScript(path: string): Script {
  const text = readFileSync(path, 'utf8');
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const mapFile = `${path}.map`;
  const map = existsSync(mapFile)
    ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8')) as SourceMapPayload)
    : undefined;
  return { lineStarts, map, mapDir: dirname(mapFile) };
}

/** The index of the last start at or before `offset` (starts ascending, the first 0). */
function lastAtOrBefore(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid]! <= offset) low = mid;
    else high = mid - 1;
  }
  return low;
}
