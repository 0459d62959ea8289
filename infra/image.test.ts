import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// What the Dockerfile puts in an image, built the same way (infra/build-service.sh) but into a
// temp folder, then run with plain node: proves the bundle's imports resolve in the deployed
// layout without a Docker engine.
const root = join(import.meta.dirname, '..');
let out: string;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'agentgw-image-'));
  execFileSync('sh', [join(root, 'infra', 'build-service.sh'), 'admin-api', out], { cwd: root, stdio: 'pipe' });
}, 180_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

const run = (file: string, env: Record<string, string>) =>
  spawnSync(process.execPath, [join(out, 'dist', file)], {
    cwd: out,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 60_000,
  });

describe('service image contents (admin-api)', () => {
  it('runs the bundled migrate command on the embedded engine', () => {
    const r = run('migrate.cli.js', { DATABASE_URL: 'memory://' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('applied 0001_initial');
    expect(r.status).toBe(0);
  });

  it('starts the bundled service far enough to report bad configuration, without a stack', () => {
    const r = run('main.js', {});
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('JWT_SECRET is required');
    // admin-api holds the platform key only: the credential key is the vault's alone.
    expect(r.stderr).toContain('PLATFORM_SECRETS_KEY is required by admin-api');
    expect(r.stderr).not.toContain('CREDENTIAL_ENCRYPTION_KEY');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
