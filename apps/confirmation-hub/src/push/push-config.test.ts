import { ConfigError, loadConfig, systemClock } from '@agentgw/core';
import { describe, expect, it } from 'vitest';
import { pushSendersFromConfig } from './push-config.js';

describe('push configuration', () => {
  it('refuses an FCM token_uri or FCM_URL on a metadata address at start-up, without echoing the key', () => {
    const key = '-----BEGIN PRIVATE KEY-----\nsecret-key-material\n-----END PRIVATE KEY-----';
    const base = { CREDENTIAL_ENCRYPTION_KEY: 'ab'.repeat(32), JWT_SECRET: 'x'.repeat(40) };
    for (const env of [
      {
        FCM_SERVICE_ACCOUNT: JSON.stringify({
          project_id: 'p',
          client_email: 'e@p',
          private_key: key,
          token_uri: 'http://169.254.169.254/computeMetadata/v1/token',
        }),
      },
      {
        FCM_SERVICE_ACCOUNT: JSON.stringify({ project_id: 'p', client_email: 'e@p', private_key: key }),
        FCM_URL: 'http://metadata.google.internal',
      },
    ]) {
      const config = loadConfig({ ...base, ...env });
      expect(() => pushSendersFromConfig(config, systemClock)).toThrow(ConfigError);
      expect(() => pushSendersFromConfig(config, systemClock)).toThrow(/FCM_SERVICE_ACCOUNT\.token_uri.*metadata/);
      expect(() => pushSendersFromConfig(config, systemClock)).not.toThrow(/secret-key-material/);
    }
  });
});
