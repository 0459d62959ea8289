import { createServer } from 'node:http';
import { serveOnLoopback } from './loopback-server.js';

// A raw agent runtime on plain node:http: reads the JSON body and answers a small JSON reply.
// The "direct" baseline of invoke. Prints `{"port":N}` once listening on 127.0.0.1.
const REPLY = JSON.stringify({ reply: 'ok', steps: [{ tool: 'none', output: 'done' }] });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(REPLY));
});
serveOnLoopback(server);
