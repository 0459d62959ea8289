import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { isCluster, redisTargetFrom } from './redis-target.js';

const base = { JWT_SECRET: 'x'.repeat(32) };

describe('REDIS_URL and REDIS_CLUSTER_NODES', () => {
  it('is one server by REDIS_URL alone, and nothing without it', () => {
    expect(redisTargetFrom(loadConfig({ ...base, REDIS_URL: 'redis://r:6379' }))).toEqual({ url: 'redis://r:6379' });
    expect(redisTargetFrom(loadConfig(base))).toBeUndefined();
  });

  it('is a cluster of the listed seeds, auth and TLS from REDIS_URL', () => {
    const target = redisTargetFrom(
      loadConfig({
        ...base,
        REDIS_URL: 'rediss://:secret@seed-a:7000',
        REDIS_CLUSTER_NODES: 'seed-a:7000, seed-b:7001,[::1]:7002',
      }),
    );
    expect(target).toEqual({
      cluster: {
        url: 'rediss://:secret@seed-a:7000',
        seeds: [
          { host: 'seed-a', port: 7000 },
          { host: 'seed-b', port: 7001 },
          { host: '::1', port: 7002 },
        ],
      },
    });
    expect(isCluster(target!)).toBe(true);
  });

  it('refuses seeds that are not host:port, naming the variable', () => {
    for (const bad of ['seed-a', 'seed-a:port', 'redis://seed-a:7000', 'a:7000;rm -rf /'])
      expect(() => loadConfig({ ...base, REDIS_URL: 'redis://r:6379', REDIS_CLUSTER_NODES: bad })).toThrow(
        /REDIS_CLUSTER_NODES must list host:port seeds/,
      );
  });

  it('refuses cluster seeds without REDIS_URL, which carries auth and TLS', () => {
    const config = loadConfig({ ...base, REDIS_CLUSTER_NODES: 'seed-a:7000' });
    expect(() => redisTargetFrom(config)).toThrow(ConfigError);
    expect(() => redisTargetFrom(config)).toThrow(/REDIS_URL is required with REDIS_CLUSTER_NODES/);
  });
});
