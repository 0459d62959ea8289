import { MODERN_PROTOCOL_VERSION } from '@agentgw/mcp-client';
import { replyJson, startRecordingUpstream, type RecordingUpstream } from '@agentgw/testkit';
import type { ServerResponse } from 'node:http';

/**
 * A stateless 2026-07-28 upstream on loopback that records every request: it answers
 * `server/discover` as `server` with `capabilities`, accepts notifications (202), leaves each
 * `subscriptions/listen` (its id and params) to `listen` to answer on `res`, and answers anything
 * else with no tools.
 */
export function startListeningUpstream(
  server: { name: string; capabilities: Record<string, unknown> },
  listen: (id: number, params: Record<string, unknown> | undefined, res: ServerResponse) => void,
): Promise<RecordingUpstream> {
  return startRecordingUpstream((req, res) => {
    const body = req.body as { id?: number; method?: string; params?: Record<string, unknown> };
    if (body?.id === undefined) return void res.writeHead(202).end();
    if (body.method === 'server/discover') {
      return replyJson(res, 200, {
        jsonrpc: '2.0',
        id: body.id,
        result: {
          resultType: 'complete',
          supportedVersions: [MODERN_PROTOCOL_VERSION],
          capabilities: server.capabilities,
          serverInfo: { name: server.name, version: '1' },
        },
      });
    }
    if (body.method === 'subscriptions/listen') return listen(body.id, body.params, res);
    return replyJson(res, 200, { jsonrpc: '2.0', id: body.id, result: { resultType: 'complete', tools: [] } });
  });
}
