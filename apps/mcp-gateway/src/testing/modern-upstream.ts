import { MODERN_PROTOCOL_VERSION } from '@agentgw/mcp-client';
import { replyJson, startRecordingUpstream, type RecordingUpstream } from '@agentgw/testkit';

/** What a test's stateless upstream answers to one request: a result (`resultType: 'complete'` unless it names its own), a JSON-RPC error, or nothing (method not found). */
export type ModernAnswer =
  { result: Record<string, unknown> } | { error: { code: number; message: string } } | undefined;

/**
 * A stateless 2026-07-28 upstream on loopback that records every request: it answers
 * `server/discover` as `server` with `capabilities`, accepts notifications (202) and leaves every
 * other request to `answer`.
 */
export function startModernUpstream(
  server: { name: string; capabilities: Record<string, unknown> },
  answer: (method: string | undefined, params: Record<string, unknown> | undefined) => ModernAnswer,
): Promise<RecordingUpstream> {
  return startRecordingUpstream((req, res) => {
    const body = req.body as { id?: number; method?: string; params?: Record<string, unknown> };
    if (body?.id === undefined) return void res.writeHead(202).end();
    const reply =
      body.method === 'server/discover'
        ? {
            result: {
              supportedVersions: [MODERN_PROTOCOL_VERSION],
              capabilities: server.capabilities,
              serverInfo: { name: server.name, version: '1' },
            },
          }
        : answer(body.method, body.params);
    if (reply === undefined)
      return replyJson(res, 200, { jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'Method not found' } });
    if ('error' in reply) return replyJson(res, 200, { jsonrpc: '2.0', id: body.id, error: reply.error });
    replyJson(res, 200, { jsonrpc: '2.0', id: body.id, result: { resultType: 'complete', ...reply.result } });
  });
}
