// The part of autocannon's API the load generator uses (it ships no types).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p99: number;
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    errors: number;
    non2xx: number;
  }
  export default function autocannon(options: {
    url: string;
    method: string;
    connections: number;
    duration: number;
    headers: Record<string, string>;
    body?: string;
  }): Promise<Result>;
}
