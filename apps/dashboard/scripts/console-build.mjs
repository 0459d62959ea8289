// Builds the console into dist/ without ever leaving a file of it missing: vite writes a fresh
// directory beside it, whose files then replace dist/'s one by one by rename (atomic for a file;
// index.html last, once the assets it names are there), and files the fresh build lacks go after.
// A build straight into dist/ empties it first, and a gateway serving the console meanwhile
// answered 500 (ENOENT index.html); renaming the whole directory away and the fresh one in left
// a gap between the two renames, which a concurrent reader hit once in CI.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const app = fileURLToPath(new URL('..', import.meta.url));
const dist = join(app, 'dist');

/** Files under `dir`, as paths relative to it. */
function filesUnder(dir, prefix = '') {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(dir, join(prefix, entry.name)) : [join(prefix, entry.name)],
  );
}

/** Moves every file of `fresh` over its namesake in `dist` (index.html last), then drops the files `fresh` did not have. */
function replaceFiles(fresh, target) {
  const files = filesUnder(fresh).sort((a, b) => Number(a === 'index.html') - Number(b === 'index.html'));
  for (const file of files) {
    mkdirSync(join(target, file, '..'), { recursive: true });
    renameSync(join(fresh, file), join(target, file));
  }
  const kept = new Set(files);
  for (const file of filesUnder(target)) if (!kept.has(file)) rmSync(join(target, file), { force: true });
}

/** Builds the console and puts the result in place of dist/. */
export async function buildConsole() {
  const { build } = await import('vite');
  const fresh = join(app, `dist-${process.pid}-${Date.now()}.tmp`);
  try {
    await build({ root: app, logLevel: 'warn', build: { outDir: fresh, emptyOutDir: true } });
    if (existsSync(dist)) replaceFiles(fresh, dist);
    else {
      try {
        renameSync(fresh, dist);
      } catch {
        // Another build put its dist/ in place meanwhile: the same sources, so the same files.
        replaceFiles(fresh, dist);
      }
    }
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

/** Whether dist/ is missing or older than the console's sources. */
export function consoleIsStale() {
  const built = join(dist, 'index.html');
  if (!existsSync(built)) return true;
  const newest = (path) => {
    const stat = statSync(path);
    return stat.isDirectory()
      ? Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
      : stat.mtimeMs;
  };
  const sources = ['src', 'index.html', 'vite.config.ts', 'package.json'].map((p) => join(app, p)).filter(existsSync);
  return statSync(built).mtimeMs < Math.max(...sources.map(newest));
}
