// `pnpm start` runs this first (the root `prestart`): builds the console when dist/ is missing or
// older than its sources, so the all-in-one serves an up-to-date console at /. A failed build
// never stops the gateway from starting; it then serves the API only and says so.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const app = fileURLToPath(new URL('..', import.meta.url));
const built = join(app, 'dist', 'index.html');

function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const sources = ['src', 'index.html', 'vite.config.ts', 'package.json'].map((p) => join(app, p)).filter(existsSync);
const stale = !existsSync(built) || statSync(built).mtimeMs < Math.max(...sources.map(newest));

if (stale) {
  console.log('Building the web console (apps/dashboard)…');
  try {
    const { build } = await import('vite');
    await build({ root: app, logLevel: 'warn' });
  } catch (err) {
    console.warn(`The web console could not be built (${err instanceof Error ? err.message : String(err)}); the gateway will serve the API only.`);
  }
}
