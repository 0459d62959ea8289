import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/** The route table of DESIGN.md: which service owns which path prefix. */
const ROUTES: Record<string, string[]> = {
  'admin-api': ['/api/v1/auth/', '/api/v1/admin/', '/api/v1/credential-providers', '/api/v1/notifications/'],
  'invoke-proxy': ['/api/v1/agents/'],
  'mcp-gateway': ['/api/v1/mcp/', '/api/v1/mcp-proxy/', '/api/v1/tool-gate/'],
  vault: ['/api/v1/credentials'],
  'confirmation-hub': ['/api/v1/confirmation/', '/api/v1/stream'],
  'audit-writer': ['/api/v1/audit/'],
};

const here = import.meta.dirname;
const nginxConf = join(here, 'nginx', 'nginx.conf');
const nginx = readFileSync(nginxConf, 'utf8');
const compose = parse(readFileSync(join(here, '..', 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { build?: { args?: { SERVICE?: string } }; environment?: Record<string, string> }>;
};

describe('path router', () => {
  const upstreams = new Map<string, string>();
  for (const m of nginx.matchAll(/set \$(\w+) http:\/\/([\w-]+):(\d+);/g)) upstreams.set(m[1]!, `${m[2]}:${m[3]}`);

  it.each(Object.entries(ROUTES))('routes every prefix of %s to it, on the port compose gives it', (service, prefixes) => {
    const port = compose.services[service]?.environment?.PORT;
    expect(port).toBeDefined();
    for (const prefix of prefixes) {
      const loc = new RegExp(`location (?:= )?${prefix.replace(/[/.-]/g, '\\$&')} \\{ proxy_pass \\$(\\w+); \\}`).exec(nginx);
      expect(loc, `no location for ${prefix}`).not.toBeNull();
      expect(upstreams.get(loc![1]!)).toBe(`${service}:${port}`);
    }
  });

  it('hides internal service-to-service endpoints', () => {
    expect(nginx).toMatch(/location \/internal\/ \{ return 404; \}/);
  });

  it.runIf(spawnSync('nginx', ['-v']).status === 0)('passes nginx -t', () => {
    const prefix = mkdtempSync(join(tmpdir(), 'nginx-'));
    expect(() => execFileSync('nginx', ['-t', '-q', '-c', nginxConf, '-p', prefix + '/'], { stdio: 'pipe' })).not.toThrow();
  });
});

describe('docker-compose', () => {
  it('runs every service from the one Dockerfile with its SERVICE build arg', () => {
    for (const service of Object.keys(ROUTES)) {
      expect(compose.services[service]?.build?.args?.SERVICE).toBe(service);
    }
  });

  it('runs PostgreSQL, Redis, the one-shot migrate and the router', () => {
    for (const s of ['postgres', 'redis', 'migrate', 'router']) expect(compose.services[s]).toBeDefined();
  });

  it('is valid against the compose spec (dclint)', () => {
    const run = spawnSync('pnpm', ['exec', 'dclint', join(here, '..', 'docker-compose.yml')], { encoding: 'utf8' });
    expect(run.status, run.stdout + run.stderr).toBe(0);
  });
});
