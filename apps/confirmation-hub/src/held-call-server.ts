import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConfirmationGate, maxPendingOf } from '@agentgw/confirmations';
import { loadConfig, type HeldCall } from '@agentgw/core';
import { buildDeps } from '@agentgw/service-kit';

/**
 * A process that holds calls through the real ConfirmationGate on distributed deps (PostgreSQL,
 * Redis), standing in for an mcp-gateway replica in the cross-replica test and the benchmark:
 * `POST /hold` with a HeldCall answers `{ outcome, releasedAt }` once the hold ends (closing
 * the request is the client going away); `POST /redeem` `{ token, call }` answers `{ ok }`.
 * HELD_CALL_GRACE_MS sets how long past the deadline the holder waits for the deadline job
 * before timing the call out itself. Prints `listening <port>` when ready.
 */
const config = loadConfig();
const deps = await buildDeps(config, { service: 'held-call-server', mode: 'distributed' });
const gate = createConfirmationGate(deps, {
  timeoutMs: config.CONFIRMATION_TIMEOUT_MS,
  maxPending: maxPendingOf(config),
  deadlineGraceMs: Number(process.env.HELD_CALL_GRACE_MS ?? 2_000),
});

const server = createServer((req, res) => {
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => (raw += chunk));
  const respond = async () => {
    try {
      const body = JSON.parse(raw) as { call: HeldCall; token?: string };
      let answer: unknown;
      if (req.url === '/hold') {
        const client = new AbortController();
        res.on('close', () => {
          if (!res.writableFinished) client.abort();
        });
        const outcome = await gate.hold(body.call, { signal: client.signal });
        answer = { outcome, releasedAt: performance.timeOrigin + performance.now() };
      } else if (req.url === '/redeem') {
        answer = { ok: await gate.redeem(body.token ?? '', body.call) };
      } else {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: (err as Error).message }));
    }
  };
  // respond answers every failure itself (500 with the message): nothing is left to await.
  req.on('end', () => void respond());
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.warn(`listening ${(server.address() as AddressInfo).port}`);
});

const stop = async () => {
  server.close();
  server.closeAllConnections();
  await gate.close();
  await deps.close();
  process.exit(0);
};
// A failed shutdown is an unhandled rejection, which ends this test process with the error.
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
