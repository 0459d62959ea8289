import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { relayableCapabilities } from './client-capabilities.js';
import { closedAfterEachTest, sseHead, sseMessage } from './legacy-stream-upstream.fixtures.js';
import type { JsonRpcRequest } from './protocol.js';
import type { UpstreamSession } from './upstream-call.js';

const { newClient, start } = closedAfterEachTest();

/**
 * An upstream whose tools/call asks the client for a sampling on the call's own stream and
 * answers the call with what the client's response (a later POST) said.
 */
async function samplingUpstream() {
  let held: { res: ServerResponse; callId: unknown } | null = null;
  const upstream = await start((req, res, body) => {
    if (req.method === 'GET') return void res.writeHead(405).end();
    if (body?.method === 'tools/call') {
      sseHead(res);
      res.write(
        sseMessage({
          jsonrpc: '2.0',
          id: 'srv-1',
          method: 'sampling/createMessage',
          params: { messages: [], maxTokens: 5 },
        }),
      );
      held = { res, callId: body.id };
    }
  });
  // A response POST (202 from the fixture) ends the held call with what it carried.
  const answered = () => {
    const response = upstream.seen.find((r) => r.body?.id === 'srv-1' && r.body.method === undefined);
    if (!response || !held) return false;
    held.res.end(
      sseMessage({
        jsonrpc: '2.0',
        id: held.callId,
        result: { content: [{ type: 'text', text: JSON.stringify(response.body) }] },
      }),
    );
    return true;
  };
  return { upstream, answered };
}

describe('requests the upstream sends while answering', () => {
  it('hands a sampling request on the call stream to onRequest with its session; respond() posts the answer there and the call completes', async () => {
    const { upstream, answered } = await samplingUpstream();
    const client = newClient();
    const target = { endpoint: upstream.url };
    const got: [JsonRpcRequest, UpstreamSession][] = [];
    const call = client.request(
      target,
      'tools/call',
      { name: 'sample' },
      {
        onRequest: (request, session) => {
          got.push([request, session]);
          void client
            .respond(target, session, {
              jsonrpc: '2.0',
              id: request.id,
              result: { role: 'assistant', content: { type: 'text', text: 'hi' } },
            })
            .then(answered);
        },
      },
    );
    const { response } = await call;
    expect(got).toEqual([
      [
        { jsonrpc: '2.0', id: 'srv-1', method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
        { protocolVersion: '2025-11-25', sessionId: 's-1' },
      ],
    ]);
    const echoed = JSON.parse(
      (response as unknown as { result: { content: { text: string }[] } }).result.content[0]!.text,
    ) as unknown;
    expect(echoed).toEqual({
      jsonrpc: '2.0',
      id: 'srv-1',
      result: { role: 'assistant', content: { type: 'text', text: 'hi' } },
    });
    const post = upstream.seen.find((r) => r.body?.id === 'srv-1')!;
    expect(post.headers).toMatchObject({ 'mcp-session-id': 's-1', 'mcp-protocol-version': '2025-11-25' });
  });

  it('answers Method not found itself when nobody takes server requests, so the upstream is not left waiting', async () => {
    const { upstream, answered } = await samplingUpstream();
    const client = newClient();
    const call = client.request({ endpoint: upstream.url }, 'tools/call', { name: 'sample' });
    while (!answered()) await new Promise((r) => setTimeout(r, 10));
    const { response } = await call;
    const echoed = JSON.parse(
      (response as unknown as { result: { content: { text: string }[] } }).result.content[0]!.text,
    ) as { error: { code: number } };
    expect(echoed).toMatchObject({
      id: 'srv-1',
      error: { code: -32601, message: 'Method not found: sampling/createMessage' },
    });
  });

  it('declares the capabilities it is given in initialize, and keeps one shared session per capability set', async () => {
    const upstream = await start((_req, res, body) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: body!.id, result: { tools: [] } }));
    });
    const client = newClient();
    const target = { endpoint: upstream.url };
    const sampling = relayableCapabilities({
      sampling: {},
      elicitation: { form: {}, extra: 1 },
      experimental: { x: {} },
    });
    await client.request(target, 'tools/list', {}, { clientCapabilities: sampling });
    await client.request(
      target,
      'tools/list',
      {},
      { clientCapabilities: relayableCapabilities({ elicitation: { form: {} }, sampling: {} }) },
    );
    await client.request(target, 'tools/list', {});
    const inits = upstream.seen
      .filter((r) => r.body?.method === 'initialize')
      .map((r) => (r.body!.params as { capabilities: unknown }).capabilities);
    expect(inits).toEqual([{ elicitation: { form: {} }, sampling: {} }, {}]);
  });
});

describe('relayableCapabilities', () => {
  it('keeps only the relayed features and their named sub-capabilities, in one canonical form', () => {
    expect(
      relayableCapabilities({ roots: { listChanged: true, x: 1 }, sampling: { tools: {}, context: 'no' }, tasks: {} }),
    ).toEqual({ roots: { listChanged: true }, sampling: { tools: {} } });
    expect(relayableCapabilities({ sampling: true, elicitation: null })).toEqual({});
    expect(relayableCapabilities('nope')).toEqual({});
  });
});
