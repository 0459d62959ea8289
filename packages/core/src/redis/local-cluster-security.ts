import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A private CA and a server certificate it signed for 127.0.0.1: what a TLS test cluster serves and its clients trust. */
export interface TestCertificates {
  /** The CA's certificate (PEM file): a client trusts it through NODE_EXTRA_CA_CERTS, redis-cli through --cacert. */
  ca: string;
  /** The nodes' certificate (subjectAltName IP:127.0.0.1) and its key (PEM files). */
  cert: string;
  key: string;
}

/**
 * Why a TLS test cluster cannot start here, or null: `redis-server` built with TLS answers a TLS
 * port without a CA with a TLS configuration error; a build without it refuses the directive.
 */
export async function redisTlsUnavailable(redisServer: string): Promise<string | null> {
  const answer = await run(redisServer, ['--port', '0', '--tls-port', '1', '--tls-cluster', 'yes'], {
    timeout: 10_000,
  }).then(
    ({ stdout, stderr }) => stdout + stderr,
    (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
  );
  return /tls-ca-cert-file|Failed to configure TLS/.test(answer)
    ? null
    : `${redisServer} was built without TLS (it answered: ${answer.trim().split('\n').at(-1) ?? 'nothing'})`;
}

/** Generates a CA and a 127.0.0.1 server certificate with `openssl` in `dir` (2048-bit RSA, one day). */
export async function createTestCertificates(dir: string): Promise<TestCertificates> {
  const files = {
    ca: join(dir, 'ca.pem'),
    caKey: join(dir, 'ca.key'),
    cert: join(dir, 'node.pem'),
    key: join(dir, 'node.key'),
  };
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir, timeout: 30_000 });
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=agentgw test CA',
    '-keyout',
    files.caKey,
    '-out',
    files.ca,
  );
  await openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    files.key,
    '-out',
    join(dir, 'node.csr'),
  );
  await openssl(
    'x509',
    '-req',
    '-in',
    join(dir, 'node.csr'),
    '-CA',
    files.ca,
    '-CAkey',
    files.caKey,
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    await extensions(dir),
    '-out',
    files.cert,
  );
  return { ca: files.ca, cert: files.cert, key: files.key };
}

/** The server certificate's extensions: Node checks a TLS peer reached by IP against an IP subjectAltName. */
async function extensions(dir: string): Promise<string> {
  const path = join(dir, 'node.ext');
  await writeFile(path, 'subjectAltName = IP:127.0.0.1\nextendedKeyUsage = serverAuth, clientAuth\n');
  return path;
}

/**
 * How the nodes are secured: none (the default), a password (`--requirepass`, and `--masterauth`
 * for the replicas), and TLS on every port (clients, replication, the cluster bus; no plain port).
 */
export interface LocalClusterSecurity {
  password?: string;
  tls?: TestCertificates;
}

/** redis-cli's connection options for `security` (its password never on a command line: REDISCLI_AUTH). */
export function cliOptions(security: LocalClusterSecurity): { args: string[]; env: NodeJS.ProcessEnv } {
  const args = security.tls ? ['--tls', '--cacert', security.tls.ca] : [];
  return { args, env: security.password ? { ...process.env, REDISCLI_AUTH: security.password } : process.env };
}

/** The redis-server arguments `security` adds: auth for clients and replicas, TLS on every port instead of plain. */
export function securityArgs(security: LocalClusterSecurity, port: number): string[] {
  const auth = security.password ? ['--requirepass', security.password, '--masterauth', security.password] : [];
  if (!security.tls) return ['--port', String(port), ...auth];
  const { ca, cert, key } = security.tls;
  return [
    ...['--port', '0', '--tls-port', String(port), '--tls-cluster', 'yes', '--tls-replication', 'yes'],
    ...['--tls-cert-file', cert, '--tls-key-file', key, '--tls-ca-cert-file', ca, '--tls-auth-clients', 'no'],
    ...auth,
  ];
}

/** REDIS_URL for a seed: `rediss://` with TLS, the password in it (URI-encoded) when there is one. */
export function seedUrl(security: LocalClusterSecurity, port: number): string {
  const auth = security.password ? `:${encodeURIComponent(security.password)}@` : '';
  return `${security.tls ? 'rediss' : 'redis'}://${auth}127.0.0.1:${port}`;
}
