import { freePort } from '@agentgw/testkit';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, run, type Finished } from './cli-process.fixtures.js';

// The root README's "Try it", run as written: every block pasted in order into one bash (-e: any
// failing command fails the test), from starting the gateway to the last tool call. Only the
// port differs (7521 may be taken on a CI machine), as a reader with PORT set would have it.
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT_MS = 480_000;

function tryItBlocks(): string[] {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const from = readme.indexOf('## Try it');
  const section = readme.slice(from, readme.indexOf('\n## ', from + 1));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** bash in a process group of its own, so the gateway it leaves in the background can be stopped with it. */
function runDetached(script: string, env: Record<string, string>): Promise<Finished & { pid: number }> {
  const child = spawn('bash', ['-c', script], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr, pid: child.pid! })));
}

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of cleanups) {
    try {
      cleanup();
    } catch {
      // already gone
    }
  }
});

describe("the README's Try it", () => {
  it(
    'works pasted in order into one terminal: the gateway started, gateway demo, every step by hand, a tool call',
    async () => {
      const blocks = tryItBlocks();
      expect(blocks.length).toBeGreaterThanOrEqual(3);
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), 'readme-try-it-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      // The gateway's data and gateway.log stay out of the checkout: the script runs where the
      // reader is (the repository root) with the data directory pointed at a scratch one.
      const script = blocks
        .join('\n')
        .replaceAll('127.0.0.1:7521', `127.0.0.1:${port}`)
        .replaceAll('gateway.log', join(dir, 'gateway.log'))
        .replace('pnpm start ', `pnpm start --data-dir ${join(dir, 'data')} `);
      const result = await runDetached(`set -euo pipefail\n${script}`, cleanEnv({ PORT: String(port) }));
      // The background gateway (pnpm start) shares bash's process group; the demo servers are detached on their own.
      cleanups.push(() => process.kill(-result.pid, 'SIGTERM'));
      for (const m of result.stderr.matchAll(/demo MCP server \(pid (\d+)\)/g)) {
        cleanups.push(() => process.kill(Number(m[1]), 'SIGTERM'));
      }
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain(`Agent Gateway listening on http://127.0.0.1:${port}`);

      // gateway demo printed the runtime token and a curl command that calls the demo's echo.
      expect(result.stdout).toMatch(/runtime token \(shown once; a rerun rotates it\):\n {2}art_[A-Za-z0-9_-]+\n/);
      const curl = /^ {2}(curl .+)$/m.exec(result.stdout)?.[1];
      expect(curl).toBeDefined();
      const called = await run(['-c', curl!], { cwd: dir, env: cleanEnv(), command: 'bash' });
      expect(JSON.parse(called.stdout)).toMatchObject({ result: { content: [{ type: 'text', text: 'hello' }] } });

      // The steps by hand print the runtime token and end in the call of the second server's echo.
      expect(result.stdout).toContain('runtime token: art_');
      const last = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as unknown;
      expect(last).toMatchObject({ result: { content: [{ type: 'text', text: 'hello from the README' }] } });
    },
    SCRIPT_MS + 60_000,
  );
});
