import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUser } from '@agentgw/testkit';
import { createCatalog } from '@agentgw/catalog';
import { loadConfig } from '@agentgw/core';
import { migrateToLatest } from '@agentgw/db';
import { buildDeps, createHost, serve } from '@agentgw/service-kit';
import { mcpGatewayService } from '../src/service.js';

// The gateway for the benchmark, in its own process: mcp-gateway's definition on the host a
// service's main.ts uses, embedded database and in-process adapters (the all-in-one's deps),
// seeded with one provider (the raw upstream), one agent and an allow rule. Prints how to call it.
const upstream = process.argv[2]!;
const dataDir = mkdtempSync(join(tmpdir(), 'agentgw-bench-'));
const config = loadConfig({
  ...process.env,
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  EGRESS_POLICY: 'allow-private',
  DATABASE_URL: `file:${join(dataDir, 'pgdata')}`,
  JWT_SECRET: 'bench-jwt-secret-that-is-long-enough-0123456789',
  CREDENTIAL_ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
});
const deps = await buildDeps(config, { service: 'mcp-gateway', mode: 'embedded', dataDir });
await migrateToLatest(deps.db);
const host = await createHost([mcpGatewayService], deps, { name: 'mcp-gateway' });
await host.start();
const server = await serve(host.app, { port: 0, hostname: '127.0.0.1', deps, logger: deps.logger, stopServices: (o) => host.stop(o) });

const adminUser = await createUser(deps, { email: 'bench-admin@example.com', roles: ['admin'] });
const admin = await deps.auth.authenticate(new Headers({ authorization: `Bearer ${await deps.auth.signUserToken(adminUser)}` }), 'jwt');
const catalog = createCatalog(deps);
const provider = await catalog.providers.create(admin, { name: 'raw', pattern: '*', endpoint: upstream, authType: 'none', priority: 0 });
const agent = await catalog.agents.create(admin, { name: 'bench', upstreamUrl: 'http://127.0.0.1:9/agent' });
await catalog.rules.create(admin, { subjectType: 'agent', subjectId: agent.agent.id, providerId: '*', action: 'allow', toolPattern: '*' });

// BENCH_PROFILE=<file>: a CPU profile of the gateway while it is under load (from here to SIGTERM).
const profileFile = process.env.BENCH_PROFILE;
const { Session } = await import('node:inspector/promises');
const profiler = new Session();
if (profileFile) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}

process.stdout.write(`${JSON.stringify({ port: server.port, token: agent.runtimeToken, providerId: provider.id })}\n`);
process.on('SIGTERM', () => {
  void (async () => {
    if (profileFile) writeFileSync(profileFile, JSON.stringify((await profiler.post('Profiler.stop')).profile));
    await server.shutdown();
  })().finally(() => {
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
});
