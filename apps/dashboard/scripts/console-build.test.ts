import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const app = fileURLToPath(new URL('..', import.meta.url));
const index = fileURLToPath(new URL('../dist/index.html', import.meta.url));

// Tests build the console (`pnpm --filter @agentgw/dashboard build`) while other tests' gateways
// serve it: the build must swap dist/ in, never empty it first (a plain `vite build` left
// index.html missing for seconds and a console page answered 500 ENOENT).
it('keeps dist/index.html in place while `build` runs, then leaves a fresh console', async () => {
  await promisify(execFile)('pnpm', ['run', '--silent', 'build'], { cwd: app });
  expect(existsSync(index)).toBe(true);
  let missing = 0;
  let polls = 0;
  const poll = setInterval(() => {
    polls++;
    if (!existsSync(index)) missing++;
  }, 2);
  try {
    await promisify(execFile)('pnpm', ['run', '--silent', 'build'], { cwd: app });
  } finally {
    clearInterval(poll);
  }
  expect(polls).toBeGreaterThan(50);
  expect(missing).toBe(0);
  expect(existsSync(index)).toBe(true);
}, 120_000);
