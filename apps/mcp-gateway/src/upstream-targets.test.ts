import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import { describe, expect, it } from 'vitest';
import { upstreamTarget } from './upstream-targets.js';

describe('upstreamTarget', () => {
  it('leaves out an identity header whose value would split the request (CR/LF, NUL), keeping the others', () => {
    const principal = {
      via: 'session_token',
      userId: 'external:https://idp.example:eve',
      email: 'eve@example.com\r\nX-Injected: 1',
      roles: [],
      tenantId: 't\u0000',
      agentId: 'agent-1',
      endUserId: 'external:https://idp.example:eve',
      apiKey: null,
      permissions: new Set(),
    } as Principal;
    const provider = { id: 'p1', endpoint: 'http://127.0.0.1:9/mcp', authType: 'none' } as ProviderRecord;
    const { headers } = upstreamTarget(provider, null, { principal, requestId: 'req_1' });
    expect(headers).toEqual({
      'x-user-id': 'external:https://idp.example:eve',
      'x-end-user-id': 'external:https://idp.example:eve',
      'x-gateway-agent-id': 'agent-1',
      'x-gateway-request-id': 'req_1',
    });
  });
});
