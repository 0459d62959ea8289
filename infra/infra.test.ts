import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseDocument } from 'yaml';

/** The route table of DESIGN.md: which service owns which path prefix. */
const ROUTES: Record<string, string[]> = {
  'admin-api': [
    '/api/v1/auth/',
    '/api/v1/admin/',
    '/api/v1/credential-providers',
    '/api/v1/notifications/',
    '/oauth/',
    '/api/v1/oauth/',
    '/.well-known/oauth-authorization-server',
    '/.well-known/openid-configuration',
  ],
  'invoke-proxy': ['/api/v1/agents/'],
  'mcp-gateway': ['/api/v1/mcp/', '/api/v1/mcp-proxy/', '/api/v1/tool-gate/', '/.well-known/oauth-protected-resource'],
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

describe('compose: the key boundary (service-kit SERVICE_KEYS)', () => {
  const sealing = (service: string) =>
    Object.keys(compose.services[service]?.environment ?? {})
      .filter((k) => /^(CREDENTIAL_ENCRYPTION|PLATFORM_SECRETS)_/.test(k))
      .sort();
  it('gives the credential key to the vault alone, the platform key to the services that seal or open platform secrets', () => {
    expect(Object.fromEntries(Object.keys(ROUTES).map((service) => [service, sealing(service)]))).toEqual({
      'admin-api': ['PLATFORM_SECRETS_KEY', 'PLATFORM_SECRETS_PREVIOUS_KEYS'],
      'invoke-proxy': ['PLATFORM_SECRETS_KEY', 'PLATFORM_SECRETS_PREVIOUS_KEYS'],
      'mcp-gateway': ['PLATFORM_SECRETS_KEY', 'PLATFORM_SECRETS_PREVIOUS_KEYS'],
      vault: [
        'CREDENTIAL_ENCRYPTION_KEY',
        'CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS',
        'PLATFORM_SECRETS_KEY',
        'PLATFORM_SECRETS_PREVIOUS_KEYS',
      ],
      'confirmation-hub': [],
      'audit-writer': [],
    });
  });
});

describe('safe defaults of the production manifests', () => {
  it('turns self-registration off for every compose service that reads settings', () => {
    const services = Object.keys(ROUTES);
    expect(
      Object.fromEntries(services.map((s) => [s, compose.services[s]?.environment?.ALLOW_SELF_REGISTRATION])),
    ).toEqual(Object.fromEntries(services.map((s) => [s, 'false'])));
  });

  it('turns self-registration off in the Kubernetes base ConfigMap, and no overlay turns it on', () => {
    const literalsOf = (file: string): string[] =>
      (
        parse(readFileSync(join(here, 'k8s', file), 'utf8')) as {
          configMapGenerator?: { name: string; literals?: string[] }[];
        }
      ).configMapGenerator?.flatMap((g) => (g.name === 'agentgw-config' ? (g.literals ?? []) : [])) ?? [];
    expect(literalsOf('base/kustomization.yaml')).toContain('ALLOW_SELF_REGISTRATION=false');
    expect(
      literalsOf('overlays/example/kustomization.yaml').filter((l) => l.startsWith('ALLOW_SELF_REGISTRATION=')),
    ).toEqual([]);
  });
});

describe('path router', () => {
  const upstreams = new Map<string, string>();
  for (const m of nginx.matchAll(/upstream (\w+) \{([^}]*)\}/g)) {
    const server = /server ([\w-]+):(\d+) resolve;/.exec(m[2]!);
    if (server) upstreams.set(m[1]!, `${server[1]}:${server[2]}`);
  }

  it.each(Object.entries(ROUTES))(
    'routes every prefix of %s to it, on the port compose gives it',
    (service, prefixes) => {
      const port = compose.services[service]?.environment?.PORT;
      expect(port).toBeDefined();
      for (const prefix of prefixes) {
        const loc = new RegExp(
          `location (?:= )?${prefix.replace(/[/.-]/g, '\\$&')} \\{ proxy_pass http://(\\w+); \\}`,
        ).exec(nginx);
        expect(loc, `no location for ${prefix}`).not.toBeNull();
        expect(upstreams.get(loc![1]!)).toBe(`${service}:${port}`);
      }
    },
  );

  it('keeps a pool of connections to every service, re-resolving its name at run time', () => {
    expect(upstreams.size).toBe(Object.keys(ROUTES).length);
    for (const m of nginx.matchAll(/upstream (\w+) \{([^}]*)\}/g)) {
      expect(m[2], m[1]).toMatch(/zone services\b/);
      expect(m[2], m[1]).toMatch(/keepalive \d+;/);
      // Shorter than Node's 5 s keep-alive, so nginx never reuses a connection the service is closing.
      expect(m[2], m[1]).toMatch(/keepalive_timeout [1-4]s;/);
    }
    expect(nginx).not.toMatch(/proxy_pass \$/);
  });

  it('hides internal service-to-service endpoints', () => {
    expect(nginx).toMatch(/location \/internal\/ \{ return 404; \}/);
  });

  // Debian's nginx (1.22) predates `server … resolve` (1.27.3, the router image's): there the
  // rest of the file is checked with the names pointed at loopback instead.
  const version = /nginx\/(\d+)\.(\d+)\.(\d+)/.exec(spawnSync('nginx', ['-v'], { encoding: 'utf8' }).stderr ?? '');
  const resolves =
    version !== null && Number(version[1]) * 1e6 + Number(version[2]) * 1e3 + Number(version[3]) >= 1_027_003;
  it.runIf(version !== null)(
    `passes nginx -t${resolves ? '' : ' (names at loopback: this nginx predates `resolve`)'}`,
    () => {
      const prefix = mkdtempSync(join(tmpdir(), 'nginx-'));
      const file = join(prefix, 'nginx.conf');
      writeFileSync(file, resolves ? nginx : nginx.replace(/server [\w-]+:(\d+) resolve;/g, 'server 127.0.0.1:$1;'));
      expect(() =>
        execFileSync('nginx', ['-t', '-q', '-c', file, '-p', prefix + '/'], { stdio: 'pipe' }),
      ).not.toThrow();
    },
  );
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

  it('has no key twice in one mapping, merge keys (<<) included: Compose v2 refuses the file otherwise', () => {
    // dclint reads the file with merges applied, where a second `<<` silently wins; read it as
    // Compose's parser does, keys as written.
    const keysTwice = (text: string) => parseDocument(text, { merge: false }).errors.map((e) => e.message);
    expect(keysTwice(readFileSync(join(here, '..', 'docker-compose.yml'), 'utf8'))).toEqual([]);
    const twoMerges =
      'x-a: &a\n  A: "1"\nx-b: &b\n  B: "2"\nservices:\n  s:\n    environment:\n      <<: *a\n      <<: *b\n';
    expect(keysTwice(twoMerges)).toEqual([expect.stringContaining('Map keys must be unique at line 9')]);
  });

  it('is valid against the compose spec (dclint)', () => {
    const run = spawnSync('pnpm', ['exec', 'dclint', join(here, '..', 'docker-compose.yml')], { encoding: 'utf8' });
    expect(run.status, run.stdout + run.stderr).toBe(0);
  });
});
