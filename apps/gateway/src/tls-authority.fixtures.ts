import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A throwaway certificate authority and one server certificate it signed, as PEM. */
export interface TestTlsAuthority {
  /** The CA certificate's file: what a process trusts through NODE_EXTRA_CA_CERTS. */
  caFile: string;
  ca: string;
  key: string;
  cert: string;
}

const openssl = (dir: string, args: string[]) =>
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });

/**
 * Test-only: a CA made for one test run (openssl, P-256, one day) and a certificate for the
 * loopback addresses 127.0.0.1 and ::1, so HTTPS servers on loopback are verified for real by
 * a process that trusts `caFile`, instead of anyone switching certificate checks off.
 */
export function createTestTlsAuthority(dir: string): TestTlsAuthority {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(dir, [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=agentgw test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  ]);
  openssl(dir, ['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  writeFileSync(
    join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n',
  );
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '1',
    '-extfile',
    'server.ext',
  ]);
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  return { caFile: join(dir, 'ca.pem'), ca: read('ca.pem'), key: read('server.key'), cert: read('server.pem') };
}
