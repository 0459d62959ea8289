import { createServer, type IncomingHttpHeaders } from 'node:http';
import { Pool, request } from 'undici';
import { serveOnLoopback } from './loopback-server.js';

// The floor any Node proxy pays, the bench's "bare" reference: node:http in, undici out through one
// keep-alive pool to the upstream origin given as argv[2], status, headers and body streamed back;
// no authentication, policy or audit. Prints `{"port":N}` once listening on 127.0.0.1.
const origin = process.argv[2]!;
const pool = new Pool(origin, { keepAliveTimeout: 60_000 });

/** Headers that describe one hop's connection, never forwarded (RFC 9110 §7.6.1), plus host. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
]);
const endToEnd = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));

const server = createServer((req, res) => {
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  request(new URL(req.url ?? '/', origin), {
    dispatcher: pool,
    method: req.method as 'POST',
    headers: endToEnd(req.headers),
    body: hasBody ? req : null,
  })
    .then((upstream) => {
      res.writeHead(upstream.statusCode, endToEnd(upstream.headers));
      // .pipe, not stream/promises' pipeline: that builds an AbortSignal and a DOMException per call, about half this proxy's CPU.
      upstream.body.on('error', () => res.destroy()).pipe(res);
    })
    .catch(() => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
});
serveOnLoopback(server, () => pool.close());
