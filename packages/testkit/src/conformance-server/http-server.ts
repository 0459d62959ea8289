import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  InMemoryServerEventBus,
  isLegacyRequest,
  localhostAllowedHostnames,
  WebStandardStreamableHTTPServerTransport,
  type EventStore,
  type JSONRPCMessage,
} from '@modelcontextprotocol/server';
import { createFixtureServer } from './fixture-content.js';

/** A running conformance fixture: its MCP URL and how to stop it. */
export interface ConformanceServer {
  url: string;
  close(): Promise<void>;
}

/** Bounds of the in-memory state a hostile or buggy client could grow. */
const MAX_SESSIONS = 200;
const MAX_EVENTS = 2_000;

/** Keeps the last MAX_EVENTS SSE events so a 2025-era client can resume a closed stream with Last-Event-ID (SEP-1699). */
function boundedEventStore(): EventStore {
  const events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  return {
    async storeEvent(streamId, message) {
      const id = `${streamId}_${randomUUID()}`;
      events.set(id, { streamId, message });
      if (events.size > MAX_EVENTS) events.delete(events.keys().next().value!);
      return id;
    },
    async getStreamIdForEventId(eventId) {
      return events.get(eventId)?.streamId;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const streamId = events.get(lastEventId)?.streamId ?? lastEventId.split('_')[0]!;
      let after = false;
      for (const [id, event] of events) {
        if (after && event.streamId === streamId) await send(id, event.message);
        if (id === lastEventId) after = true;
      }
      return streamId;
    },
  };
}

/**
 * McpServer turns every error a tool throws into an `isError` result, so the one protocol error a
 * 2026-07-28 tool must raise (-32021, MissingRequiredClientCapabilityError, HTTP 400) is answered
 * here, before the SDK: `test_missing_capability` without the `sampling` client capability.
 */
function missingCapabilityAnswer(body: unknown): Response | null {
  const message = body as
    { id?: unknown; method?: unknown; params?: { name?: unknown; _meta?: Record<string, unknown> } } | undefined;
  if (message?.method !== 'tools/call' || message.params?.name !== 'test_missing_capability') return null;
  const capabilities = message.params._meta?.['io.modelcontextprotocol/clientCapabilities'] as
    Record<string, unknown> | undefined;
  if (!capabilities || capabilities.sampling) return null;
  const error = {
    code: -32021,
    message: 'Missing required client capabilities: sampling',
    data: { requiredCapabilities: { sampling: {} } },
  };
  return Response.json({ jsonrpc: '2.0', id: message.id ?? null, error }, { status: 400 });
}

/**
 * The conformance fixture upstream on 127.0.0.1 (random port): 2026-07-28 requests go to the
 * SDK's stateless handler (`server/discover`, `subscriptions/listen`, input-required results),
 * 2025-era requests to a session per `initialize` (standalone GET stream, resumable SSE,
 * subscriptions). Hosts other than loopback are refused (DNS rebinding).
 */
export async function startConformanceServer(): Promise<ConformanceServer> {
  const bus = new InMemoryServerEventBus();
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const modern = createMcpHandler(
    () =>
      createFixtureServer({
        toolsChanged: () => modern.notify.toolsChanged(),
        promptsChanged: () => modern.notify.promptsChanged(),
      }),
    { legacy: 'reject', bus },
  );
  const eventStore = boundedEventStore();

  const legacy = async (request: Request, body: unknown): Promise<Response> => {
    const sessionId = request.headers.get('mcp-session-id');
    const existing = sessionId ? sessions.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(request, { parsedBody: body });
    if (sessionId)
      return Response.json(
        { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null },
        { status: 404 },
      );
    if (request.method !== 'POST')
      return Response.json(
        { jsonrpc: '2.0', error: { code: -32000, message: 'Missing Mcp-Session-Id' }, id: null },
        { status: 400 },
      );
    if (sessions.size >= MAX_SESSIONS)
      sessions
        .values()
        .next()
        .value?.close()
        .catch(() => undefined);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore,
      retryInterval: 500,
      onsessioninitialized: (id) => void sessions.set(id, transport),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const server = createFixtureServer({
      toolsChanged: () => void server.sendToolListChanged(),
      promptsChanged: () => void server.sendPromptListChanged(),
    });
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  };

  const listener = getRequestListener(async (request) => {
    const refused = hostHeaderValidationResponse(request, localhostAllowedHostnames());
    if (refused) return refused;
    let body: unknown;
    if (request.method === 'POST') {
      try {
        body = await request.clone().json();
      } catch {
        body = undefined;
      }
    }
    if (await isLegacyRequest(request, body)) return legacy(request, body);
    return missingCapabilityAnswer(body) ?? modern.fetch(request);
  });
  // Hono's listener answers a throw with a 500 itself; its promise has nothing left to report.
  const http = createServer((req, res) => void listener(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close().catch(() => undefined)));
      await modern.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
