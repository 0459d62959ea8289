import { serve as nodeServe, type ServerType } from '@hono/node-server';
import type { Logger } from '@agentgw/core';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ServeOptions {
  port: number;
  hostname?: string;
  /**
   * Closed after the server has stopped (database, Redis, queues), given what is left of the
   * shutdown bound (at least DEPS_CLOSE_MIN_MS): a dependency that cannot close by then is left.
   */
  deps: { close(options: { deadlineMs: number }): Promise<void> };
  logger: Logger;
  /** How long in-flight requests (e.g. open SSE streams) may take to finish on shutdown. */
  shutdownTimeoutMs?: number;
  /**
   * Called once the listener stops accepting, before waiting for in-flight requests: the host's
   * `stop`, which ends open streams and consumers within `deadlineMs` (the shutdown bound).
   */
  stopServices?(options: { deadlineMs: number }): Promise<void>;
  /** Called first on shutdown, before the listener closes: the host's `drain` (readiness turns 503). */
  onDrain?(): void;
  /** Install SIGTERM/SIGINT handlers that shut down and exit 0 (default true). */
  handleSignals?: boolean;
  /** `METRICS_PORT`: the host's `metricsApp` on 127.0.0.1 only, closed with the server; none when `port` is undefined. */
  metrics?: { app: FetchApp; port: number | undefined };
}

type FetchApp = { fetch(request: Request): Response | Promise<Response> };

/** The least time deps get to close, however long the services took to stop. */
const DEPS_CLOSE_MIN_MS = 1_000;

export interface RunningServer {
  /** The bound port (useful with port 0). */
  port: number;
  /** The loopback metrics listener's port, when one was asked for. */
  metricsPort?: number;
  server: ServerType;
  /** Stop accepting, stop the services, wait for in-flight requests up to the bound, then close deps. Idempotent. */
  shutdown(): Promise<void>;
}

/** Listens with `app` on Node's HTTP server and shuts down gracefully (see `RunningServer.shutdown`). */
export async function serve(app: FetchApp, options: ServeOptions): Promise<RunningServer> {
  const { logger } = options;
  const server = await listen(app, options.port, options.hostname);
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, address: options.hostname ?? '0.0.0.0' }, 'listening'); // pino's own `hostname` is the machine's
  let metricsServer: ServerType | undefined;
  if (options.metrics?.port !== undefined) {
    try {
      metricsServer = await listen(options.metrics.app, options.metrics.port, '127.0.0.1');
    } catch (err) {
      await closeNow(server);
      throw err;
    }
    logger.info({ port: (metricsServer.address() as AddressInfo).port, address: '127.0.0.1' }, 'metrics listening');
  }

  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    stopping ??= (async () => {
      logger.info('shutting down');
      options.onDrain?.();
      const http = server as Server;
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      // Keep-alive connections would outlive the drain: answers from now on close theirs, and
      // connections that finish an in-flight answer are closed once idle.
      http.on('request', (_req, res: ServerResponse) => void (res.shouldKeepAlive = false));
      http.closeIdleConnections();
      const sweep = setInterval(() => http.closeIdleConnections(), 100);
      const deadlineMs = options.shutdownTimeoutMs ?? 10_000;
      const endsAt = Date.now() + deadlineMs;
      const timer = setTimeout(() => {
        logger.warn('in-flight requests did not finish in time; closing their connections');
        http.closeAllConnections();
      }, deadlineMs);
      await options
        .stopServices?.({ deadlineMs })
        .catch((err: unknown) => logger.warn({ err }, 'error while stopping services'));
      await closed;
      if (metricsServer) await closeNow(metricsServer);
      clearInterval(sweep);
      clearTimeout(timer);
      await options.deps.close({ deadlineMs: Math.max(DEPS_CLOSE_MIN_MS, endsAt - Date.now()) });
      logger.info('stopped');
    })();
    return stopping;
  };

  if (options.handleSignals ?? true) {
    let received = false;
    const onSignal = (signal: NodeJS.Signals) => {
      // Ctrl-C under `pnpm start` arrives twice (the terminal's, then pnpm's forwarded copy): a
      // repeat must not kill the shutdown under way with the default handler (exit 130).
      if (received) return void logger.debug({ signal }, 'signal received again; already shutting down');
      received = true;
      logger.info({ signal }, 'signal received');
      shutdown().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
  return { port, metricsPort: metricsServer && (metricsServer.address() as AddressInfo).port, server, shutdown };
}

/** Closes a listener and its connections (a scraper's kept-alive one included) at once. */
function closeNow(server: ServerType): Promise<void> {
  const http = server as Server;
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  http.closeAllConnections();
  return closed;
}

/**
 * How long an idle kept-alive connection stays open. Above the common load balancers' idle
 * timeout (60 s): one that reuses a connection this side already closed (Node's default is 5 s)
 * fails that request (a 502, or ECONNRESET for a client that does not retry a POST).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

function listen(app: FetchApp, port: number, hostname: string | undefined): Promise<ServerType> {
  return new Promise<ServerType>((resolve, reject) => {
    const s = nodeServe({ fetch: app.fetch, port, hostname }, () => resolve(s));
    const http = s as Server;
    http.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    // Node's guidance: the headers timeout above the keep-alive one, so a reused connection's
    // request is not cut off while its first bytes are on the way.
    http.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
    s.once('error', reject);
  });
}
