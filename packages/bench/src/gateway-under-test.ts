/** A gateway topology the benchmark drives: its base URL and the processes that count as it. */
/** Some of a topology's processes, named: a service, the router, a shared server. */
export interface ProcessPart {
  name: string;
  pids: number[];
  /** Not started by the bench (PostgreSQL, Redis): its CPU includes whatever else they serve. */
  shared?: true;
}

export interface GatewayUnderTest {
  name: string;
  base: string;
  /** Every process whose CPU counts as the gateway's (wrappers and the router included). */
  pids(): number[];
  /** The processes running the services (memory, event-loop probe). */
  servers(): number[];
  /**
   * The topology's processes by part (each service, the router, the shared PostgreSQL and Redis
   * servers), for CPU per part; one part, the gateway, for the all-in-one.
   */
  parts(): ProcessPart[];
  stop(): Promise<void>;
}

/** What the bench starts every gateway process with, in both topologies. */
export interface BenchProcessOptions {
  /** The event-loop probe every process loads (`--import`). */
  probe: string;
  probeDir: string;
  admin: { email: string; password: string };
  /** What makes the processes profile themselves (eventloop-probe.mjs); empty: no profile. */
  profileEnv: Record<string, string>;
}

/** A measured gateway's environment, with or without the probe: quiet logs, loopback upstreams allowed, the seeded admin. */
export function gatewayEnv(admin: { email: string; password: string }): Record<string, string> {
  return {
    LOG_LEVEL: 'warn',
    EGRESS_POLICY: 'allow-private',
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
  };
}

/** The environment every gateway process under the bench shares: gatewayEnv and the probe. */
export function benchProcessEnv(options: BenchProcessOptions): Record<string, string> {
  return {
    ...gatewayEnv(options.admin),
    BENCH_PROBE_DIR: options.probeDir,
    ...options.profileEnv,
    NODE_OPTIONS: `--import=${options.probe}`,
  };
}

/** Polls `/health` until it answers 200; fails when the process died or after 3 minutes. */
export async function waitHealthy(base: string, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + 180_000;
  while ((await fetch(`${base}/health`).catch(() => null))?.status !== 200) {
    if (Date.now() > deadline || !alive()) throw new Error(`${base} did not become healthy`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
