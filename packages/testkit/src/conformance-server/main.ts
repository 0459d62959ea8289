import { startConformanceServer } from './http-server.js';

// `pnpm --filter @agentgw/testkit conformance-server`: starts the fixture and prints its URL on the first line (the runner reads it).
const server = await startConformanceServer();
process.stdout.write(`${server.url}\n`);
const stop = () => void server.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
