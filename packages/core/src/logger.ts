import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

/** Field names whose values never reach a log line. */
const REDACT = [
  'password', 'passwordHash', 'token', 'apiKey', 'key', 'secret', 'authSecret', 'upstreamSecret',
  'clientSecret', 'runtime_token', 'authorization', 'headers.authorization', 'headers["x-api-key"]',
  '*.password', '*.token', '*.apiKey', '*.secret', '*.authSecret', '*.upstreamSecret', '*.clientSecret',
];

export interface LoggerOptions {
  level?: string;
  name?: string;
  /** Where lines go instead of stdout (tests read them back). */
  destination?: DestinationStream;
}

/** The process's pino logger: secrets redacted by field name, JSON lines on stdout. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const settings = {
    name: options.name,
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT, censor: '[redacted]' },
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
