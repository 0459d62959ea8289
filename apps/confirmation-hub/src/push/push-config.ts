import { ConfigError, EgressRefusedError, egressPolicyFromConfig, type Clock, type Config } from '@agentgw/core';
import { APNS_PRODUCTION_URL, APNS_SANDBOX_URL, createApnsSender } from './apns.js';
import { createFcmSender, FCM_DEFAULT_URL, ServiceAccount } from './fcm.js';
import type { PushSender } from './push-sender.js';

const APNS_VARIABLES = ['APNS_TEAM_ID', 'APNS_KEY_ID', 'APNS_PRIVATE_KEY', 'APNS_TOPIC'] as const;

/** The four APNs variables when all are set, else null. */
function apnsVariables(config: Config): { teamId: string; keyId: string; privateKey: string; topic: string } | null {
  const { APNS_TEAM_ID: teamId, APNS_KEY_ID: keyId, APNS_PRIVATE_KEY: privateKey, APNS_TOPIC: topic } = config;
  if (teamId === undefined || keyId === undefined || privateKey === undefined || topic === undefined) return null;
  return { teamId, keyId, privateKey, topic };
}

/**
 * The push services configured in the environment: APNs when its four variables are set, FCM
 * when FCM_SERVICE_ACCOUNT is; none when unset (push off). A half-done or unreadable
 * configuration is a ConfigError at start-up, naming the variables, never echoing a key.
 */
export function pushSendersFromConfig(config: Config, clock: Clock): PushSender[] {
  const problems: { variable: string; message: string }[] = [];
  const senders: PushSender[] = [];

  const setApns = APNS_VARIABLES.filter((v) => config[v] !== undefined);
  const apns = apnsVariables(config);
  if (setApns.length > 0 && setApns.length < APNS_VARIABLES.length) {
    for (const variable of APNS_VARIABLES.filter((v) => config[v] === undefined)) {
      problems.push({
        variable,
        message: `is required when ${setApns.join(', ')} ${setApns.length === 1 ? 'is' : 'are'} set`,
      });
    }
  } else if (apns !== null) {
    const privateKey = apns.privateKey.replace(/\\n/g, '\n');
    if (!privateKey.includes('-----BEGIN PRIVATE KEY-----')) {
      problems.push({
        variable: 'APNS_PRIVATE_KEY',
        message: 'must be the .p8 key (PEM, -----BEGIN PRIVATE KEY-----)',
      });
    } else {
      senders.push(
        createApnsSender({
          teamId: apns.teamId,
          keyId: apns.keyId,
          privateKey,
          topic: apns.topic,
          baseUrl: config.APNS_URL ?? (config.APNS_ENVIRONMENT === 'sandbox' ? APNS_SANDBOX_URL : APNS_PRODUCTION_URL),
          clock,
        }),
      );
    }
  }

  if (config.FCM_SERVICE_ACCOUNT !== undefined) {
    let raw: unknown;
    try {
      raw = JSON.parse(config.FCM_SERVICE_ACCOUNT);
    } catch {
      raw = undefined;
    }
    const account = ServiceAccount.safeParse(raw);
    if (!account.success) {
      problems.push({
        variable: 'FCM_SERVICE_ACCOUNT',
        message: 'must be a service-account JSON key (project_id, client_email, private_key)',
      });
    } else {
      const options = {
        serviceAccount: account.data,
        baseUrl: config.FCM_URL ?? FCM_DEFAULT_URL,
        egress: egressPolicyFromConfig(config),
        clock,
      };
      try {
        senders.push(createFcmSender(options));
      } catch (err) {
        if (!(err instanceof EgressRefusedError)) throw err;
        problems.push({
          variable:
            config.FCM_URL !== undefined ? 'FCM_URL or FCM_SERVICE_ACCOUNT.token_uri' : 'FCM_SERVICE_ACCOUNT.token_uri',
          message: `is refused: ${err.message}`,
        });
      }
    }
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return senders;
}
