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

/** Polls `/health` until it answers 200; fails when the process died or after 3 minutes. */
export async function waitHealthy(base: string, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + 180_000;
  while ((await fetch(`${base}/health`).catch(() => null))?.status !== 200) {
    if (Date.now() > deadline || !alive()) throw new Error(`${base} did not become healthy`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
