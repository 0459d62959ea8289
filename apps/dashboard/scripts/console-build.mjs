// Builds the console into dist/ without ever leaving dist/ half-written: vite writes a fresh
// directory beside it, which then takes dist/'s place by two renames. A build straight into dist/
// empties it first, and a gateway serving the console meanwhile answered 500 (ENOENT index.html):
// CI runs `pnpm start`'s build (gateway tests) and the console e2e's at the same time.
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const app = fileURLToPath(new URL('..', import.meta.url));
const dist = join(app, 'dist');

/** Builds the console and puts the result in place of dist/. */
export async function buildConsole() {
  const { build } = await import('vite');
  const unique = `${process.pid}-${Date.now()}`;
  const fresh = join(app, `dist-${unique}.tmp`);
  const old = join(app, `dist-${unique}.old`);
  try {
    await build({ root: app, logLevel: 'warn', build: { outDir: fresh, emptyOutDir: true } });
    if (existsSync(dist)) renameSync(dist, old);
    try {
      renameSync(fresh, dist);
    } catch {
      // Another build put its dist/ in place between the two renames: it stands.
    }
  } finally {
    rmSync(fresh, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
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
