import { hash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Worker } from 'node:worker_threads';
import { Counter, Histogram, Registry } from 'prom-client';
import { Pool } from 'undici';
import { serveOnLoopback } from './loopback-server.js';

// The bench's "floor" reference for a unified tools/call: what the spec asks of a plain allowed
// call, written as plainly as possible in one function, so the table can tell the work a call
// needs from what the gateway's layers add. Per call: read and parse the JSON-RPC body and check
// its shape; authenticate the bearer runtime token by its SHA-256 in a map; decide from an
// (agent, tool) table; resolve the exposed name to its provider and upstream name; build the
// audit record (masked arguments and result capped at 4 KiB, status, duration) and hand one
// event-loop turn's records to a worker thread in one postMessage (the worker writes nothing: the
// database's share is the gateway's worker-thread figure); forward over one undici keep-alive
// pool; parse the answer; answer with the client's id; count it and observe its latency in two
// prom-client metrics. argv: the upstream's MCP URL, the runtime token it accepts. Not a gateway:
// no sessions, holds, checks of the kill switch or quarantine, no access log.
const upstreamUrl = new URL(process.argv[2]!);
const pool = new Pool(upstreamUrl.origin, { keepAliveTimeout: 60_000 });
const tokenHash = (token: string) => hash('sha256', token, 'base64url');
const principals = new Map([[tokenHash(process.argv[3]!), { agentId: 'agent' }]]);
const decisions = new Map([['agent\u0000echo', 'allow']]);
const exposed = new Map([['echo', { provider: 'raw', upstream: 'echo' }]]);
const RECORD_CAP = 4096;

const worker = new Worker('require("node:worker_threads").parentPort.on("message", () => {});', { eval: true });
worker.unref();
let records: object[] = [];
const handOver = () => {
  worker.postMessage(records);
  records = [];
};

const registry = new Registry();
const labelNames = ['method', 'route', 'status'] as const;
const requests = new Counter({ name: 'requests_total', help: 'answered', labelNames, registers: [registry] });
const duration = new Histogram({ name: 'request_seconds', help: 'latency', labelNames, registers: [registry] });

interface CallMessage {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: { name?: unknown; arguments?: unknown };
}

let nextId = 1;

/** One POST: status and body to answer with. */
async function toolsCall(authorization: string, text: string): Promise<[number, string]> {
  const started = performance.now();
  const principal = principals.get(tokenHash(authorization.slice('Bearer '.length)));
  if (!principal) return [401, ''];
  let message: CallMessage;
  try {
    message = JSON.parse(text) as CallMessage;
  } catch {
    return [400, ''];
  }
  const name = message.params?.name;
  if (message.jsonrpc !== '2.0' || message.method !== 'tools/call' || typeof name !== 'string') return [400, ''];
  const tool = exposed.get(name);
  if (!tool || decisions.get(`${principal.agentId}\u0000${name}`) !== 'allow') return [403, ''];
  const record = {
    id: randomUUID(),
    agentId: principal.agentId,
    providerId: tool.provider,
    toolName: name,
    arguments: JSON.stringify(message.params?.arguments ?? null).slice(0, RECORD_CAP),
    status: 'pending',
    at: Date.now(),
    result: '',
    duration: 0,
  };
  const upstream = await pool.request({
    path: upstreamUrl.pathname,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': tool.upstream,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: { ...message.params, name: tool.upstream },
    }),
  });
  const answer = JSON.parse(await upstream.body.text()) as { result?: { isError?: boolean } };
  record.status = answer.result?.isError ? 'failed' : 'completed';
  record.result = JSON.stringify(answer.result ?? null).slice(0, RECORD_CAP);
  record.duration = performance.now() - started;
  if (records.length === 0) setImmediate(handOver);
  records.push(record);
  const labels = { method: 'POST', route: '/api/v1/mcp/:endpoint', status: '200' };
  requests.inc(labels);
  duration.observe(labels, (performance.now() - started) / 1000);
  return [200, JSON.stringify({ jsonrpc: '2.0', id: message.id, result: answer.result })];
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    toolsCall(req.headers.authorization ?? '', Buffer.concat(chunks).toString('utf8')).then(
      ([status, body]) => res.writeHead(status, { 'content-type': 'application/json' }).end(body),
      () => res.writeHead(502).end(),
    );
  });
});
serveOnLoopback(server, () => pool.close());
