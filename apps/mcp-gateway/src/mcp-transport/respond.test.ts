import type { Principal } from '@agentgw/auth';
import { parseSse, type JsonRpcRequest } from '@agentgw/mcp-client';
import { clientGoneSignal } from '@agentgw/service-kit';
import { Hono } from 'hono';
import { describe, expect, it, vi } from 'vitest';
import type { McpRequestContext } from '../mcp-context.js';
import { parsePost, type ParsedPost, type RequestItem, type Invalid } from './parse-and-negotiate.js';
import { NO_HEADERS } from './replies.js';
import { ProtectedResources } from '../protected-resource/protected-resource.js';
import { NOTIFICATIONS_MAX_UNREAD_BYTES, respond, type RespondDeps } from './respond.js';
import { CUT_OFF_MESSAGE, NOT_RUN_MESSAGE, OpenRequests } from './open-requests.js';
import { MemoryResumptionStore } from '../stream-resumption/resumption-store.js';
import { systemClock } from '@agentgw/core';

type Handler = (request: JsonRpcRequest, ctx: McpRequestContext) => ReturnType<RespondDeps['router']['handle']>;

/** An app whose POST answers the body's requests through `respond`, with `handle` as the method router. */
function appWith(handle: Handler, protocolVersion = '2025-06-18', open = new OpenRequests()) {
  const deps: RespondDeps = {
    router: { handle },
    auth: {
      authenticate: async () => ({}) as Principal,
      authenticateOAuth: () => Promise.reject(new Error('no OAuth here')),
    },
    resources: new ProtectedResources({}),
    resumption: new MemoryResumptionStore(systemClock),
    listenHeartbeatMs: 30_000,
    open,
  };
  const app = new Hono();
  app.post('/', async (c) => {
    const parsed = parsePost(await c.req.text()) as ParsedPost;
    const requests = parsed.items.filter((i): i is RequestItem => i.kind === 'request');
    const invalid = parsed.items.filter((i): i is Invalid => i.kind === 'invalid');
    const principal = {} as Principal;
    const endpoint = { kind: 'unified', providerFilter: null, toolsParam: null } as const;
    return respond(deps, {
      c,
      principal,
      endpoint,
      protocolVersion,
      session: null,
      batch: parsed.batch,
      requests,
      invalid,
      sessionHeaders: NO_HEADERS,
      connection: clientGoneSignal(c),
    });
  });
  return (body: unknown, accept: string) =>
    app.request('/', {
      method: 'POST',
      headers: { accept, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
}

const call = (id: number, method = 'tools/call') => ({ jsonrpc: '2.0', id, method, params: { name: 't' } });
const ok = (request: JsonRpcRequest, result: Record<string, unknown> = { content: [] }) => ({
  response: { jsonrpc: '2.0' as const, id: request.id, result },
  status: 200,
});
const events = async (res: Response) => {
  const out: unknown[] = [];
  for await (const event of parseSse(res.body!)) {
    expect(event.event).toBe('message');
    out.push(JSON.parse(event.data));
  }
  return out;
};
const BOTH = 'application/json, text/event-stream';

describe('respond', () => {
  it("answers JSON with the answer's HTTP status, shaped for the revision", async () => {
    const post = appWith(async (r) => ({
      response: { jsonrpc: '2.0', id: r.id, error: { code: -32003, message: 'denied' } },
      status: 403,
    }));
    const res = await post(call(1), 'application/json');
    expect([res.status, res.headers.get('content-type')]).toEqual([403, 'application/json']);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32003, message: 'denied' } });
    const modern = appWith(async (r) => ok(r), '2026-07-28');
    expect(await (await modern(call(2), 'application/json')).json()).toMatchObject({
      id: 2,
      result: { resultType: 'complete', content: [] },
    });
  });

  it("a client taking both gets JSON when the call's answer is ready before anything is streamed", async () => {
    const post = appWith(async (r) => ok(r));
    const res = await post(call(1), BOTH);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toMatchObject({ id: 1, result: { content: [] } });
  });

  it('streams SSE once the call notifies: the notifications, then the answer, as `message` events', async () => {
    const post = appWith(async (r, ctx) => {
      ctx.notify!({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } });
      await new Promise((resolve) => setTimeout(resolve, 10));
      ctx.notify!({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 2 } });
      return ok(r);
    });
    const res = await post(call(7), BOTH);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(await events(res)).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 2 } },
      { jsonrpc: '2.0', id: 7, result: { content: [] } },
    ]);
  });

  it('drops notifications past 1 MiB unread by a client that does not read, never a server request or the answer', async () => {
    const note = 'x'.repeat(1024);
    const sent = 4000;
    const post = appWith(async (r, ctx) => {
      // ~4 MiB of progress offered while nothing reads the answer's body.
      for (let i = 1; i <= sent; i++)
        ctx.notify!({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: i, message: note } });
      ctx.channel!.send({ jsonrpc: '2.0', id: 'ask', method: 'sampling/createMessage', params: {} });
      return ok(r);
    });
    const res = await post(call(9), BOTH);
    const got = (await events(res)) as { id?: unknown; method?: string }[];
    const progress = got.filter((m) => m.method === 'notifications/progress');
    expect(progress.length).toBeGreaterThan((NOTIFICATIONS_MAX_UNREAD_BYTES / (note.length + 100)) * 0.9);
    expect(progress.length).toBeLessThan(sent / 2);
    expect(got.slice(-2).map((m) => m.id)).toEqual(['ask', 9]);
  });

  it("a batch: JSON holds the invalid messages' errors first, then the answers; SSE the same, in order", async () => {
    const post = appWith(async (r) => ok(r, { n: r.id }));
    const batch = [{ jsonrpc: '2.0', id: 'bad' }, call(1, 'tools/list'), call(2, 'tools/list')];
    const json = (await (await post(batch, 'application/json')).json()) as { id: unknown }[];
    expect(json.map((m) => m.id)).toEqual(['bad', 1, 2]);
    const sse = (await events(await post([batch[0], call(1), call(2)], BOTH))) as { id: unknown }[];
    expect(sse.map((m) => m.id)).toEqual(['bad', 1, 2]);
  });

  it("the client leaving an open SSE answer aborts the call's signal", async () => {
    let aborted!: () => void;
    const sawAbort = new Promise<void>((resolve) => (aborted = resolve));
    const post = appWith(async (r, ctx) => {
      ctx.signal.addEventListener('abort', () => aborted());
      ctx.notify!({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } });
      await sawAbort;
      return null;
    });
    const res = await post(call(1), BOTH);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await sawAbort;
  });
});

describe('respond during a shutdown', () => {
  const shutdownError = (id: number, message: string) => ({
    jsonrpc: '2.0',
    id,
    error: { code: -32000, message, data: { code: 'SHUTTING_DOWN' } },
  });

  it('a held call let go by the closing gate (no answer of its own) is answered with the error and its id', async () => {
    const open = new OpenRequests();
    let letGo!: () => void;
    const gateClosed = new Promise<void>((resolve) => (letGo = resolve));
    const post = appWith(
      async (_r, ctx) => {
        ctx.notify!({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 0 } });
        await gateClosed;
        return null; // what a hold ended by the gate's close() answers
      },
      '2025-06-18',
      open,
    );
    const res = await post(call(41), BOTH);
    const answers = events(res);
    open.beginStopping();
    letGo();
    await open.finish(1_000);
    expect((await answers).at(-1)).toEqual(shutdownError(41, NOT_RUN_MESSAGE));
  });

  it('a listen is answered at once; a call still running when the bound runs out is answered 503 as abandoned', async () => {
    const open = new OpenRequests();
    const never = new Promise<null>(() => {});
    const post = appWith(() => never, '2025-06-18', open);
    const listen = post(call(1, 'subscriptions/listen'), BOTH);
    const running = post(call(2), 'application/json');
    await vi.waitFor(() => expect(open.size).toBe(2));
    open.beginStopping();
    // Nothing was streamed yet, so its answer goes as JSON.
    expect(await (await listen).json()).toEqual(shutdownError(1, NOT_RUN_MESSAGE));
    await open.finish(10);
    const res = await running;
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual(shutdownError(2, CUT_OFF_MESSAGE));
  });
});
