import type { CredentialProviderRow } from '@agentgw/db';
import { describe, expect, it } from 'vitest';
import { authUrlFor } from './auth-urls.js';

const provider = (
  auth_type: CredentialProviderRow['auth_type'],
  config: Record<string, unknown> = {},
): CredentialProviderRow => ({
  id: 'p1',
  name: 'p',
  service_type: 'svc',
  auth_type,
  description: null,
  config,
  tenant_id: null,
  created_at: new Date(),
  updated_at: new Date(),
});

const none = { OAUTH_CALLBACK_BASE_URL: undefined, GATEWAY_PUBLIC_URL: undefined, PORT: undefined };

describe('authUrlFor', () => {
  it('sends oauth2 providers to the gateway OAuth start URL, preferring OAUTH_CALLBACK_BASE_URL', () => {
    expect(authUrlFor(none, 'google', provider('oauth2'))).toBe(
      'http://localhost:7521/api/v1/credentials/oauth/google/auth',
    );
    expect(authUrlFor({ ...none, PORT: 3001 }, 'google', provider('oauth2'))).toBe(
      'http://localhost:3001/api/v1/credentials/oauth/google/auth',
    );
    expect(authUrlFor({ ...none, GATEWAY_PUBLIC_URL: 'https://gw.example.com/' }, 'google', provider('oauth2'))).toBe(
      'https://gw.example.com/api/v1/credentials/oauth/google/auth',
    );
    expect(
      authUrlFor(
        { ...none, GATEWAY_PUBLIC_URL: 'https://gw.example.com', OAUTH_CALLBACK_BASE_URL: 'https://auth.example.com' },
        'google',
        provider('oauth2'),
      ),
    ).toBe('https://auth.example.com/api/v1/credentials/oauth/google/auth');
  });

  it.each(['jwt', 'api_key', 'basic'] as const)('uses config.connectUrl of a %s provider', (type) => {
    expect(authUrlFor(none, 'svc', provider(type, { connectUrl: 'https://svc.example.com/connect' }))).toBe(
      'https://svc.example.com/connect',
    );
  });

  it('falls back to the gateway credentials page without a provider or connectUrl', () => {
    expect(authUrlFor(none, 'svc', undefined)).toBe('http://localhost:7521/credentials?serviceType=svc');
    expect(authUrlFor({ ...none, GATEWAY_PUBLIC_URL: 'https://gw.example.com' }, 'svc', provider('jwt'))).toBe(
      'https://gw.example.com/credentials?serviceType=svc',
    );
  });
});
