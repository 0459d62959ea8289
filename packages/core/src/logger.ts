import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

/** Field names whose values never reach a log line. */
const REDACT = [
  'password', 'passwordHash', 'token', 'apiKey', 'key', 'secret', 'authSecret', 'upstreamSecret',
  'clientSecret', 'runtime_token', 'authorization', 'headers.authorization', 'headers["x-api-key"]',
  '*.password', '*.token', '*.apiKey', '*.secret', '*.authSecret', '*.upstreamSecret', '*.clientSecret',
];

export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: options.name,
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT, censor: '[redacted]' },
  });
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
