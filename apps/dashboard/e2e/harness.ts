import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { seedEmbeddedDataDir } from '@agentgw/db/testing';
import { freePort } from '@agentgw/testkit';

/** Debian's Chromium: the only browser the tests use (never a downloaded one). */
export const CHROMIUM = '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);

export const DASHBOARD_DIR = fileURLToPath(new URL('..', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const SCREENSHOT_DIR = join(DASHBOARD_DIR, 'e2e', 'screenshots');

export interface RunningGateway {
  url: string;
  log(): string;
  stop(): Promise<void>;
}

/** How a test wants the gateway process: `port` when another server must know its URL first, `env` for extra settings. */
export interface GatewayOptions {
  publicUrl?: '127.0.0.1' | 'localhost';
  port?: number;
  env?: Record<string, string>;
}

/**
 * The all-in-one as a real process (`gateway start`, as `pnpm start` runs it) on a free port,
 * with a fresh embedded database in a temp directory (seeded from the migrated image) and an admin
 * from ADMIN_EMAIL/PASSWORD.
 */
export async function startGatewayUnderTest(
  admin: { email: string; password: string },
  options: GatewayOptions = {},
): Promise<RunningGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentgw-dashboard-e2e-'));
  // Migrated already (the shared image): the start skips initdb and the migrations, ~8 s of CPU.
  await seedEmbeddedDataDir(join(dataDir, 'data', 'pgdata'));
  const port = options.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'DATABASE_URL',
    'REDIS_URL',
    'PORT',
    'JWT_SECRET',
    'CREDENTIAL_ENCRYPTION_KEY',
    'NODE_ENV',
    'VAULT_URL',
  ])
    delete env[name];
  Object.assign(env, {
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    INIT_CWD: dataDir,
    LOG_LEVEL: 'warn',
    // The MCP fixture listens on 127.0.0.1, which the default egress policy refuses.
    EGRESS_POLICY: 'allow-private',
    ...options.env,
  });
  // The gateway as MCP clients' authorization server needs its public URL (the issuer).
  // Unset, the gateway derives http://127.0.0.1:<port> from its loopback address.
  if (options.publicUrl) env.GATEWAY_PUBLIC_URL = `http://${options.publicUrl}:${port}`;
  const child: ChildProcess = spawn(
    join(REPO_ROOT, 'node_modules', '.bin', 'tsx'),
    [
      join(REPO_ROOT, 'apps', 'gateway', 'src', 'cli.ts'),
      'start',
      '--port',
      String(port),
      '--data-dir',
      join(dataDir, 'data'),
    ],
    {
      cwd: dataDir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));

  const url = `http://127.0.0.1:${port}`;
  // Creating the embedded database (initdb) took over 90 s on a machine shared under heavy load: a bound for hangs.
  const deadline = Date.now() + START_BOUND_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the gateway exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the gateway did not answer /health within ${START_BOUND_MS / 1000} s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }

  return {
    url,
    log: () => output,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Chromium with the flags CI needs and a fresh profile directory. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'agentgw-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const axeSource = readFileSync(join(DASHBOARD_DIR, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core in the page; returns the serious and critical violations. axe is evaluated
 * through the DevTools protocol, which the console's Content-Security-Policy (no inline
 * scripts) does not apply to, so the page keeps its real policy.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            ctx: Document,
            options: object,
          ): Promise<{
            violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }>;
          }>;
        };
      }
    ).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => JSON.stringify(n.target)),
    }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Saves a full-page screenshot as e2e/screenshots/<name>.png (committed for the closing note). */
/** How long the gateway may take to answer /health after its start. */
const START_BOUND_MS = 300_000;

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true, animations: 'disabled' });
  return path;
}
