import { generateRuntimeToken, seal } from '@agentgw/auth';
import { newId } from '@agentgw/core';
import { json, migrateToLatest, openDatabase } from '@agentgw/db';
import { seedEmbeddedDataDir } from '@agentgw/db/testing';
import { authHeaders, freePort, startRecordingUpstream } from '@agentgw/testkit';
import { hkdfSync } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  existsSync,
  writeFileSync,
} from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  cleanEnv,
  GATEWAY_BIN,
  GATEWAY_BUNDLE,
  run,
  startGatewayProcessUnderTest,
  type Server,
} from './cli-process.fixtures.js';

const LISTENING = /Agent Gateway listening on http:\/\/127\.0\.0\.1:(\d+)/;
const NO_STACK = /^\s+at .+:\d+:\d+\)?$/m;

let dir: string;
let server: Server | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-cli-'));
});
afterEach(async () => {
  await server?.stop();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

// PORT=1: status and admin look for a running gateway on PORT; nothing listens on port 1.
// A first start or admin command creates the embedded database (initdb: ~9 s of CPU alone, over
// a minute when CI's two cores run four suites; most tests here start on one seeded from the
// migrated image instead), so the bounds below catch hangs, not slowness.
const PROCESS_MS = 300_000;
const gateway = (args: string[], env: Record<string, string> = {}) =>
  run([GATEWAY_BUNDLE, ...args], { cwd: dir, env: cleanEnv({ PORT: '1', ...env }), timeoutMs: PROCESS_MS });
/** The CLI through `bin/gateway.mjs` (tsx, what `pnpm gateway` runs): the same commands, unbundled. */
const gatewayUnbundled = (args: string[]) =>
  run([GATEWAY_BIN, ...args], { cwd: dir, env: cleanEnv({ PORT: '1' }), timeoutMs: PROCESS_MS });
/** A start on a data directory with no database finds one loaded from the migrated image (a first start's initdb is `pnpm start`'s test). */
async function startGatewayUnderTest(env: Record<string, string> = {}, args: string[] = []): Promise<Server> {
  const dataDir = args.includes('--data-dir') ? args[args.indexOf('--data-dir') + 1]! : join(dir, '.gateway-data');
  await seedEmbeddedDataDir(join(dataDir, 'pgdata'));
  return startGatewayProcessUnderTest([GATEWAY_BUNDLE, 'start', '--port', '0', ...args], {
    cwd: dir,
    env: cleanEnv(env),
    ready: LISTENING,
    timeoutMs: PROCESS_MS,
  });
}

/** This machine's IPv4 addresses other than loopback (none in some sandboxes). */
const externalAddresses = (): string[] =>
  Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && a.family === 'IPv4' && !a.internal)
    .map((a) => a!.address);

describe('gateway start', () => {
  it(
    'boots with no configuration, keeps generated secrets in secrets.json (0600) and reuses them after a restart',
    async () => {
      const admin = { ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'correct-horse-1' };
      server = await startGatewayUnderTest(admin);
      expect(server.output()).toContain(
        'Generated JWT_SECRET, CREDENTIAL_ENCRYPTION_KEY and PLATFORM_SECRETS_KEY and stored them in .gateway-data/secrets.json',
      );

      const base = `http://127.0.0.1:${server.port}`;
      const health = await fetch(`${base}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({
        status: 'ok',
        service: 'gateway',
        checks: { database: 'ok', redis: 'in-process' },
      });

      const secretsFile = join(dir, '.gateway-data', 'secrets.json');
      expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
      const secrets = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, string>;
      expect(secrets.JWT_SECRET).toHaveLength(48);
      expect(secrets.CREDENTIAL_ENCRYPTION_KEY).toMatch(/^[0-9a-f]{64}$/);
      expect(secrets.PLATFORM_SECRETS_KEY).toMatch(/^[0-9a-f]{64}$/);
      expect(secrets.PLATFORM_SECRETS_KEY).not.toBe(secrets.CREDENTIAL_ENCRYPTION_KEY);

      const login = await fetch(`${base}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: admin.ADMIN_EMAIL, password: admin.ADMIN_PASSWORD }),
      });
      expect(login.status).toBe(200);
      const { token } = (await login.json()) as { token: string };
      expect(
        (await fetch(`${base}/api/v1/admin/agents`, { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);

      // The running gateway owns the embedded database: status asks it, admin refuses.
      const status = await gateway(['status', '--port', String(server.port)]);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/JWT_SECRET\s+from secrets\.json \(hidden\)/);
      expect(status.stdout).toMatch(/database\s+ok \(reported by the gateway running on port \d+, process \d+\)/);
      expect(status.stdout).not.toContain(secrets.JWT_SECRET);
      const locked = await gateway(['admin', 'list']);
      expect(locked.code).toBe(1);
      expect(locked.stderr).toContain('in use by another process');

      const stopped = await server.stop();
      server = undefined;
      expect(stopped.code).toBe(0);

      // Second boot: same secrets, the first run's token still works, the admin is not created twice.
      server = await startGatewayUnderTest(admin);
      expect(server.output()).toContain(
        'Using JWT_SECRET, CREDENTIAL_ENCRYPTION_KEY and PLATFORM_SECRETS_KEY from .gateway-data/secrets.json.',
      );
      expect(JSON.parse(readFileSync(secretsFile, 'utf8'))).toEqual(secrets);
      const again = `http://127.0.0.1:${server.port}`;
      expect(
        (await fetch(`${again}/api/v1/admin/agents`, { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
      expect(
        (await fetch(`${again}/api/v1/admin/agents`, { headers: { authorization: 'Bearer not-a-token' } })).status,
      ).toBe(401);
      await server.stop();
      server = undefined;

      const admins = await gateway(['admin', 'list']);
      expect(admins.code).toBe(0);
      expect(admins.stdout.match(/root@example\.com/g)).toHaveLength(1);
    },
    4 * PROCESS_MS,
  );

  it(
    'on a fixed port with nothing configured: listens on loopback only, says so, and MCP clients can sign in (issuer derived)',
    async () => {
      const port = await freePort();
      server = await startGatewayUnderTest({}, ['--port', String(port)]);
      const base = `http://127.0.0.1:${port}`;
      expect(server.output()).toContain(`Agent Gateway listening on ${base} (loopback only (127.0.0.1);`);
      expect(server.output()).toContain(`MCP endpoint: ${base}/api/v1/mcp/mcp`);
      expect(server.output()).toContain(
        `MCP client sign-in (OAuth): on, issuer ${base} (derived from the loopback address`,
      );
      expect(server.output()).toContain('Self-registration: on, anyone who reaches this machine may create an account');
      const metadata = await fetch(`${base}/.well-known/oauth-authorization-server`);
      expect(metadata.status).toBe(200);
      expect(((await metadata.json()) as { issuer: string }).issuer).toBe(base);
      const resource = await fetch(`${base}/.well-known/oauth-protected-resource/api/v1/mcp/mcp`);
      expect(((await resource.json()) as { authorization_servers: string[] }).authorization_servers).toEqual([base]);
      // Bound to loopback: this machine's other addresses are refused.
      for (const address of externalAddresses()) {
        await expect(fetch(`http://${address}:${port}/health`), address).rejects.toThrow();
      }
    },
    2 * PROCESS_MS,
  );

  it(
    'on every interface without GATEWAY_PUBLIC_URL: says why MCP client sign-in is off and keeps self-registration off',
    async () => {
      const port = await freePort();
      server = await startGatewayUnderTest({ HOST: '0.0.0.0' }, ['--port', String(port)]);
      const base = `http://127.0.0.1:${port}`;
      expect(server.output()).toContain(`Agent Gateway listening on ${base} (on every interface, port ${port})`);
      expect(server.output()).toContain(
        'MCP client sign-in (OAuth): off, 0.0.0.0 is not a loopback address, so the URL clients use is unknown; set GATEWAY_PUBLIC_URL',
      );
      expect(server.output()).toContain('Self-registration: off (ALLOW_SELF_REGISTRATION=true turns it on)');
      expect((await fetch(`${base}/.well-known/oauth-authorization-server`)).status).toBe(404);
      const register = await fetch(`${base}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'someone@example.com', password: 'long-enough-1', name: 'Someone' }),
      });
      expect(register.status).toBe(403);
      expect(((await register.json()) as { code: string }).code).toBe('REGISTRATION_DISABLED');
    },
    2 * PROCESS_MS,
  );

  it(
    'rejects a bad configuration with one message naming every bad variable and no stack',
    async () => {
      const result = await gateway(['start'], { JWT_SECRET: 'short', CREDENTIAL_ENCRYPTION_KEY: 'xyz' });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('JWT_SECRET must be at least 32 characters');
      expect(result.stderr).toContain('CREDENTIAL_ENCRYPTION_KEY must be 64 hex characters');
      expect(result.stderr).not.toMatch(NO_STACK);
      expect(existsSync(join(dir, '.gateway-data', 'secrets.json'))).toBe(false);
    },
    2 * PROCESS_MS,
  );

  it(
    'does not generate secrets in production: their absence is a start-up error',
    async () => {
      const result = await gateway(['start'], { NODE_ENV: 'production' });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('Invalid configuration');
      expect(result.stderr).toContain('JWT_SECRET is required');
      expect(result.stderr).toContain('CREDENTIAL_ENCRYPTION_KEY is required');
      expect(result.stderr).toContain('PLATFORM_SECRETS_KEY is required');
      expect(result.stderr).not.toMatch(NO_STACK);
      expect(existsSync(join(dir, '.gateway-data'))).toBe(false);
    },
    2 * PROCESS_MS,
  );

  it(
    'upgrades an install whose secrets.json predates PLATFORM_SECRETS_KEY: adds one, and the secrets sealed before still open',
    async () => {
      // An older install: secrets.json with the two founding secrets, an agent and a provider whose
      // secrets were sealed under the credential key's HKDF subkey (the scheme before the platform key).
      const dataDir = join(dir, '.gateway-data');
      const old = { JWT_SECRET: 'j'.repeat(48), CREDENTIAL_ENCRYPTION_KEY: 'c4'.repeat(32) };
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(join(dataDir, 'secrets.json'), JSON.stringify(old), { mode: 0o600 });
      const legacyKey = Buffer.from(
        hkdfSync(
          'sha256',
          Buffer.from(old.CREDENTIAL_ENCRYPTION_KEY, 'hex'),
          Buffer.alloc(0),
          'agentgw upstream-secrets',
          32,
        ),
      );
      const upstream = await startRecordingUpstream();
      const agentId = newId();
      await seedEmbeddedDataDir(join(dataDir, 'pgdata'));
      const handle = await openDatabase({ dataDir });
      try {
        await migrateToLatest(handle.db);
        const token = generateRuntimeToken();
        await handle.db
          .insertInto('agents')
          .values({
            id: agentId,
            name: 'old-bot',
            description: 'stored by an older version',
            upstream_url: upstream.url,
            upstream_secret_enc: seal(legacyKey, 'old-upstream-secret', agentId),
            required_credentials: json([]),
            tenant_id: null,
            is_active: true,
            runtime_token_hash: token.hash,
            runtime_token_prefix: token.prefix,
          })
          .execute();
      } finally {
        await handle.close();
      }

      try {
        const admin = { ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'correct-horse-1' };
        server = await startGatewayUnderTest(admin);
        expect(server.output()).toContain('Generated PLATFORM_SECRETS_KEY and stored it in .gateway-data/secrets.json');
        expect(server.output()).toContain(
          'Using JWT_SECRET and CREDENTIAL_ENCRYPTION_KEY from .gateway-data/secrets.json.',
        );
        const secretsFile = join(dataDir, 'secrets.json');
        const upgraded = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, string>;
        expect(upgraded).toMatchObject(old);
        expect(upgraded.PLATFORM_SECRETS_KEY).toMatch(/^[0-9a-f]{64}$/);
        expect(statSync(secretsFile).mode & 0o777).toBe(0o600);

        const base = `http://127.0.0.1:${server.port}`;
        const login = await fetch(`${base}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: admin.ADMIN_EMAIL, password: admin.ADMIN_PASSWORD }),
        });
        const headers = authHeaders(((await login.json()) as { token: string }).token);
        const invoke = () =>
          fetch(`${base}/api/v1/agents/${agentId}/invoke`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ message: 'hi' }),
          });
        expect((await invoke()).status).toBe(200);
        expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer old-upstream-secret');

        // A restart keeps the added key (nothing generated again), and the old secret still opens.
        await server.stop();
        server = await startGatewayUnderTest(admin);
        expect(server.output()).toContain(
          'Using JWT_SECRET, CREDENTIAL_ENCRYPTION_KEY and PLATFORM_SECRETS_KEY from .gateway-data/secrets.json.',
        );
        expect(JSON.parse(readFileSync(secretsFile, 'utf8'))).toEqual(upgraded);
        const again = `http://127.0.0.1:${server.port}`;
        expect(
          (
            await fetch(`${again}/api/v1/agents/${agentId}/invoke`, {
              method: 'POST',
              headers,
              body: JSON.stringify({ message: 'hi' }),
            })
          ).status,
        ).toBe(200);
        expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer old-upstream-secret');
      } finally {
        await upstream.close();
      }
    },
    4 * PROCESS_MS,
  );
});

describe('pnpm start', () => {
  const APP_DIR = fileURLToPath(new URL('..', import.meta.url));
  const pnpmStart = () =>
    startGatewayProcessUnderTest(['start', '--data-dir', join(dir, 'data'), '--port', '0'], {
      command: 'pnpm',
      detached: true,
      cwd: APP_DIR,
      env: cleanEnv(),
      ready: LISTENING,
      timeoutMs: PROCESS_MS,
    });

  // The script used to run the gateway under `sh -c '… && node …'`: the shell died of the signal
  // (pnpm: ELIFECYCLE, exit 130/143) and on a SIGTERM to pnpm alone the gateway was left running.
  it.each([
    ['Ctrl-C (SIGINT to the process group)', 'SIGINT', true],
    ['SIGTERM to pnpm alone', 'SIGTERM', false],
  ] as const)(
    'ends quietly with exit 0 on %s, the gateway stopped with it',
    async (_name, signal, group) => {
      server = await pnpmStart();
      const health = `http://127.0.0.1:${server.port}/health`;
      expect((await fetch(health)).status).toBe(200);
      const stopped = await server.stop(signal, { group });
      server = undefined;
      expect(stopped.code).toBe(0);
      expect(stopped.stdout).not.toMatch(/ELIFECYCLE|Command failed/);
      await expect(fetch(health)).rejects.toThrow();
    },
    2 * PROCESS_MS,
  );
});

describe('gateway init', () => {
  it(
    'writes a .env that start uses, and refuses to overwrite it without --force',
    async () => {
      const first = await gateway(['init']);
      expect(first.code).toBe(0);
      const envFile = join(dir, '.env');
      const content = readFileSync(envFile, 'utf8');
      const jwt = /^JWT_SECRET=(.+)$/m.exec(content)?.[1];
      expect(jwt).toHaveLength(48);
      expect(content).toMatch(/^CREDENTIAL_ENCRYPTION_KEY=[0-9a-f]{64}$/m);
      expect(content).toMatch(/^PLATFORM_SECRETS_KEY=[0-9a-f]{64}$/m);
      expect(statSync(envFile).mode & 0o777).toBe(0o600);

      const refused = await gateway(['init']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('--force');
      expect(readFileSync(envFile, 'utf8')).toBe(content);

      const status = await gateway(['status']);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/JWT_SECRET\s+set \(hidden\)/);
      expect(status.stdout).toMatch(/configuration\s+valid/);
      expect(status.stdout).not.toContain(jwt);

      server = await startGatewayUnderTest();
      expect(server.output()).not.toContain('secrets.json');
      expect(existsSync(join(dir, '.gateway-data', 'secrets.json'))).toBe(false);
      expect((await fetch(`http://127.0.0.1:${server.port}/health`)).status).toBe(200);

      // --force rewrites the file but keeps its keys (new ones would not open the data); the old file is kept.
      const forced = await gateway(['init', '--force']);
      expect(forced.code).toBe(0);
      expect(forced.stdout).toContain('JWT_SECRET, CREDENTIAL_ENCRYPTION_KEY, PLATFORM_SECRETS_KEY from the old .env');
      expect(readFileSync(envFile, 'utf8')).toBe(content);
      const backups = readdirSync(dir).filter((f) => f.startsWith('.env.bak-'));
      expect(backups).toHaveLength(1);
      expect(readFileSync(join(dir, backups[0]!), 'utf8')).toBe(content);
    },
    4 * PROCESS_MS,
  );

  it(
    'writes the keys secrets.json holds; start refuses keys that do not open the stored data',
    async () => {
      server = await startGatewayUnderTest();
      await server.stop();
      server = undefined;
      const stored = JSON.parse(readFileSync(join(dir, '.gateway-data', 'secrets.json'), 'utf8')) as Record<
        string,
        string
      >;

      // What init used to do: new keys in .env, which win over secrets.json.
      const other = { CREDENTIAL_ENCRYPTION_KEY: 'd4'.repeat(32), PLATFORM_SECRETS_KEY: 'e5'.repeat(32) };
      writeFileSync(
        join(dir, '.env'),
        Object.entries(other)
          .map(([k, v]) => `${k}=${v}\n`)
          .join(''),
      );
      const refused = await gateway(['start', '--port', '0']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        'CREDENTIAL_ENCRYPTION_KEY and PLATFORM_SECRETS_KEY do not open the data in this database',
      );
      expect(refused.stderr).not.toMatch(NO_STACK);

      rmSync(join(dir, '.env'));
      const init = await gateway(['init']);
      expect(init.code).toBe(0);
      expect(init.stdout).toContain(
        'JWT_SECRET, CREDENTIAL_ENCRYPTION_KEY, PLATFORM_SECRETS_KEY from .gateway-data/secrets.json',
      );
      const written = readFileSync(join(dir, '.env'), 'utf8');
      for (const name of ['JWT_SECRET', 'CREDENTIAL_ENCRYPTION_KEY', 'PLATFORM_SECRETS_KEY']) {
        expect(written).toContain(`${name}=${stored[name]}\n`);
      }
      server = await startGatewayUnderTest();
      expect((await fetch(`http://127.0.0.1:${server.port}/health`)).status).toBe(200);
    },
    4 * PROCESS_MS,
  );
});

describe('gateway status', () => {
  it(
    'reports a valid fresh setup without creating anything',
    async () => {
      const result = await gateway(['status']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/JWT_SECRET\s+not set \(generated on first start\)/);
      expect(result.stdout).toMatch(/database\s+not created yet/);
      expect(existsSync(join(dir, '.gateway-data'))).toBe(false);
    },
    2 * PROCESS_MS,
  );

  it(
    'reports the data directory asked about, not another gateway that answers on PORT',
    async () => {
      server = await startGatewayUnderTest({}, ['--data-dir', join(dir, 'running')]);
      const other = await gateway(['status', '--data-dir', join(dir, 'other'), '--port', String(server.port)]);
      expect(other.stdout).toMatch(/database\s+not created yet/);
      const same = await gateway(['status', '--data-dir', join(dir, 'running'), '--port', String(server.port)]);
      expect(same.stdout).toMatch(/database\s+ok \(reported by the gateway running on port \d+, process \d+\)/);
    },
    3 * PROCESS_MS,
  );

  it(
    'exits non-zero when the database is unreachable, and hides the password in the URL',
    async () => {
      const result = await gateway(['status', '--db', 'postgres://agw:hunter2@127.0.0.1:1/agw']);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/database\s+down/);
      expect(result.stdout).toContain('postgres://agw:***@127.0.0.1:1/agw');
      expect(result.stdout).not.toContain('hunter2');
    },
    2 * PROCESS_MS,
  );

  it(
    'exits non-zero and names the variable when the configuration is invalid',
    async () => {
      writeFileSync(join(dir, '.env'), 'JWT_EXPIRES_IN=forever\n');
      const result = await gateway(['status']);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/configuration\s+JWT_EXPIRES_IN must be a duration/);
    },
    2 * PROCESS_MS,
  );
});

describe('gateway backup and restore', () => {
  it(
    'round-trips the embedded database: refused while the gateway runs, restored elsewhere, opened with its keys',
    async () => {
      const admin = { ADMIN_EMAIL: 'keep@example.com', ADMIN_PASSWORD: 'correct-horse-2' };
      server = await startGatewayUnderTest(admin);
      const running = await gateway(['backup', '--out', 'while-running.tar.gz']);
      expect(running.code).toBe(1);
      expect(running.stderr).toContain('is in use by another process');
      await server.stop();
      server = undefined;

      const backup = await gateway(['backup', '--out', 'gateway.tar.gz']);
      expect(backup.code, backup.stderr).toBe(0);
      expect(backup.stdout).toContain('The archive holds the database only: keep the keys');
      expect(statSync(join(dir, 'gateway.tar.gz')).mode & 0o777).toBe(0o600);
      const again = await gateway(['backup', '--out', 'gateway.tar.gz']);
      expect(again.code).toBe(1);

      const restored = join(dir, 'restored');
      const restore = await gateway(['restore', 'gateway.tar.gz', '--data-dir', restored]);
      expect(restore.code, restore.stderr).toBe(0);
      const over = await gateway(['restore', 'gateway.tar.gz', '--data-dir', restored]);
      expect(over.code).toBe(1);
      expect(over.stderr).toContain('already holds a database');

      // With the keys it was written under (kept apart, as the command says), the restored copy opens.
      const keys = JSON.parse(readFileSync(join(dir, '.gateway-data', 'secrets.json'), 'utf8')) as Record<
        string,
        string
      >;
      server = await startGatewayUnderTest(keys, ['--data-dir', restored]);
      const login = await fetch(`http://127.0.0.1:${server.port}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: admin.ADMIN_EMAIL, password: admin.ADMIN_PASSWORD }),
      });
      expect(login.status).toBe(200);

      const postgres = await gateway(['backup', '--db', 'postgres://agw@127.0.0.1:1/agw']);
      expect(postgres.code).toBe(2);
      expect(postgres.stderr).toContain('pg_dump');
    },
    6 * PROCESS_MS,
  );
});

describe('gateway admin', () => {
  it(
    'creates and lists admins, refusing duplicates and bad input',
    async () => {
      await seedEmbeddedDataDir(join(dir, '.gateway-data', 'pgdata'));
      const created = await gateway([
        'admin',
        'create',
        '--email',
        'Ops@Example.com',
        '--password',
        'long-enough-1',
        '--name',
        'Ops',
      ]);
      expect(created.code).toBe(0);
      expect(created.stdout).toContain('Created admin ops@example.com');

      const duplicate = await gateway(['admin', 'create', '--email', 'ops@example.com', '--password', 'long-enough-1']);
      expect(duplicate.code).toBe(1);
      expect(duplicate.stderr).toContain('already exists');

      const invalid = await gateway(['admin', 'create', '--email', 'nope', '--password', 'short']);
      expect(invalid.code).toBe(2);
      expect(invalid.stderr).toContain('--email must be an email address');
      expect(invalid.stderr).toContain('--password must be at least 8 characters');

      const list = await gateway(['admin', 'list']);
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(/ops@example\.com {2}Ops {2}\(global\)/);
    },
    4 * PROCESS_MS,
  );

  it(
    "prints its version and each command's help without running the command",
    async () => {
      const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
        version: string;
      };
      for (const args of [['--version'], ['-v'], ['version']]) {
        const result = await gateway(args);
        expect(result.code, args.join(' ')).toBe(0);
        expect(result.stdout).toBe(`gateway ${version}\n`);
      }
      // The package's bin (tsx, unbundled) is the same CLI.
      expect(await gatewayUnbundled(['--version'])).toMatchObject({ code: 0, stdout: `gateway ${version}\n` });
      expect((await gatewayUnbundled(['start', '--help'])).stdout).toMatch(/^Usage: gateway start /);
      for (const [args, usage] of [
        [['start', '--help'], 'Usage: gateway start [--port N] [--host ADDR]'],
        [['help', 'restore'], 'Usage: gateway restore FILE'],
        [['admin', 'create', '-h'], 'Usage: gateway admin create --email E --password P'],
        [['backup', '--help'], 'Usage: gateway backup [--out FILE]'],
      ] as const) {
        const result = await gateway([...args]);
        expect(result.code, args.join(' ')).toBe(0);
        expect(result.stdout.startsWith(usage), result.stdout).toBe(true);
      }
      expect(existsSync(join(dir, '.gateway-data'))).toBe(false);
      expect(existsSync(join(dir, '.env'))).toBe(false);
    },
    2 * PROCESS_MS,
  );

  it(
    'answers an unknown command with the usage and exit 2',
    async () => {
      const result = await gateway(['launch']);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('Unknown command: launch');
      expect(result.stderr).toContain('Usage: gateway');
    },
    2 * PROCESS_MS,
  );
});
