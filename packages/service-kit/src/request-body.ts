import type { IncomingMessage } from 'node:http';
import { assertJsonDepth, jsonDepthLimit, ValidationError } from '@agentgw/core';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit as honoBodyLimit } from 'hono/body-limit';
import { markBodyRead, ownBodyLimit, payloadTooLarge } from './body-limit.js';
import { nodeIncoming, provideBody, readHeadersFromNode } from './hono-internals.js';

const isJson = (contentType: string | undefined) => contentType !== undefined && /json/i.test(contentType);
// As Request.text() decodes: UTF-8 with replacement characters, a leading BOM dropped.
const utf8 = new TextDecoder();

/**
 * The request body, read straight from Node's stream and handed to hono's body cache, under
 * the route's limit (its own `bodyLimit`, else the host's default), with JSON nesting checked
 * once. Reading it through the web `Request` instead would build a Request, an AbortSignal and
 * two web streams per call: the largest cost of the shell in the profile. Under `app.request`
 * (tests, no Node stream) the same limits apply through hono's body limit. Hono's own header reads
 * are pointed at Node's raw headers here too, for every method (`readHeadersFromNode`).
 */
export function requestBody(options: { defaultMaxBytes: number; maxDepth?: number }): MiddlewareHandler {
  const webLimits = new Map<number, MiddlewareHandler>();
  const webLimit = (maxSize: number) => {
    let limit = webLimits.get(maxSize);
    if (!limit) webLimits.set(maxSize, (limit = honoBodyLimit({ maxSize, onError: payloadTooLarge })));
    return limit;
  };
  const depthLimit = jsonDepthLimit({ maxDepth: options.maxDepth });
  return async (c, next) => {
    readHeadersFromNode(c);
    const method = c.req.method;
    if (method === 'GET' || method === 'HEAD') return next();
    const own = ownBodyLimit(c);
    const incoming = nodeIncoming(c);
    if (!incoming) {
      // `app.request` (tests): the same limit and check, through hono's limit on the web Request.
      return webLimit(own ?? options.defaultMaxBytes)(c, async () => {
        markBodyRead(c);
        await depthLimit(c, next);
      });
    }
    const limit = own ?? options.defaultMaxBytes;
    if (Number(incoming.headers['content-length'] ?? 0) > limit) return payloadTooLarge(c);
    const body = await readIncoming(incoming, limit);
    if (body === 'too-large') return payloadTooLarge(c);
    if (body === 'closed')
      return c.json(new ValidationError('Request body ended early', { field: '(body)' }).toBody(), 400);
    markBodyRead(c);
    const text = utf8.decode(body);
    // c.req.text()/json() and anything that still asks the web Request for its body get these bytes.
    provideBody(c, incoming, body, text);
    if (isJson(incoming.headers['content-type'])) assertJsonDepth(text, options.maxDepth);
    return next();
  };
}

/**
 * The whole body; 'too-large' as soon as it exceeds `limit` (the rest is left to the adapter,
 * which drains or drops it); 'closed' when the client went away mid-body.
 */
function readIncoming(incoming: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'closed'> {
  if (incoming.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        incoming.pause();
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      // One chunk is the body as it is (no copy).
      resolve((chunks.length === 1 ? chunks[0] : undefined) ?? Buffer.concat(chunks, size));
    };
    // Reset or closed before its end: the client went away mid-body.
    const onClose = () => {
      if (incoming.readableEnded) return;
      cleanup();
      resolve('closed');
    };
    const onError = onClose;
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}
