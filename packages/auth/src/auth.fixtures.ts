import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '@agentgw/core';

/** A valid configuration for tests; `env` overrides or adds variables. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    JWT_SECRET: 'test-secret-that-is-at-least-32-characters-long',
    CREDENTIAL_ENCRYPTION_KEY: '11'.repeat(32),
    PLATFORM_SECRETS_KEY: '22'.repeat(32),
    NODE_ENV: 'test',
    ...env,
  });
}

/** Serves a JWKS document on 127.0.0.1 (the external-issuer key set); `hits()` counts requests. */
export async function serveJwks(jwks: {
  keys: object[];
}): Promise<{ url: string; hits(): number; close(): Promise<void> }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    hits: () => hits,
    close: () => new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
