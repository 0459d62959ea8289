import type { HealthBody } from '@agentgw/service-kit';

/** The /health of a gateway already listening on this machine, or null when none answers. */
export async function probeRunningGateway(port: number): Promise<HealthBody | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) });
    const body = (await res.json()) as Partial<HealthBody>;
    return body.service === 'gateway' && body.checks ? (body as HealthBody) : null;
  } catch {
    return null;
  }
}
