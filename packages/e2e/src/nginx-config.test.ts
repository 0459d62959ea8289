import { describe, expect, it } from 'vitest';
import {
  locationLines,
  readRouterConf,
  ROUTER_UPSTREAMS,
  runtimeNginxConf,
  type RouterUpstream,
} from './nginx-config.js';

const upstreams = Object.fromEntries(
  ROUTER_UPSTREAMS.map((name, i) => [name, [`127.0.0.1:${9000 + i}`, `127.0.0.1:${9100 + i}`]]),
) as Record<RouterUpstream, string[]>;

describe('runtime copy of infra/nginx/nginx.conf', () => {
  it('keeps the location table and the keep-alive pools, lists the replicas in every upstream group, and moves pid/logs/temp paths', async () => {
    const original = await readRouterConf();
    const conf = runtimeNginxConf(original, { upstreams, port: 18080, dir: '/tmp/e2e-x' });
    expect(locationLines(conf)).toEqual(locationLines(original));
    expect(locationLines(conf)).toContain('location /api/v1/mcp/ { proxy_pass http://mcp_gateway; }');
    expect(conf).toContain('listen 127.0.0.1:18080;');
    expect(conf).toContain('pid /tmp/e2e-x/nginx.pid;');
    expect(conf).toContain('client_body_temp_path /tmp/e2e-x/client_body_temp;');
    expect(conf).toMatch(
      /upstream mcp_gateway \{\n\s+zone services;\n\s+server 127\.0\.0\.1:9002 [^\n]*\n\s+server 127\.0\.0\.1:9102 [^\n]*\n\s+keepalive \d+;/,
    );
    expect(conf).not.toMatch(/(admin-api|mcp-gateway|vault):\d+/);
    expect(conf).not.toContain(' resolve;');
    expect(conf).not.toContain('listen 80;');
  });

  it('refuses a file whose shape it no longer knows instead of running something else', () => {
    expect(() => runtimeNginxConf('events {}\nhttp {\n}\n', { upstreams, port: 1, dir: '/tmp' })).toThrow(
      /no longer has/,
    );
  });
});
