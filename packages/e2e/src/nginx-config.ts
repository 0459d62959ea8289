import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The router's real configuration; the runtime copy is derived from it, never hand-written. */
export const NGINX_CONF = fileURLToPath(new URL('../../../infra/nginx/nginx.conf', import.meta.url));

/** The six upstream groups of nginx.conf (`upstream <name> { … }`), in the file's names. */
export const ROUTER_UPSTREAMS = [
  'admin_api',
  'invoke_proxy',
  'mcp_gateway',
  'vault',
  'confirmation_hub',
  'audit_writer',
] as const;
export type RouterUpstream = (typeof ROUTER_UPSTREAMS)[number];

export interface RuntimeNginxOptions {
  /** host:port of every replica behind each upstream group. */
  upstreams: Record<RouterUpstream, string[]>;
  port: number;
  /** A private temp directory: pid, access log and nginx's temp paths go there. */
  dir: string;
  /** Where the built console is served from instead of the image's /usr/share/nginx/html (omitted: unchanged). */
  consoleRoot?: string;
}

/** `location …` lines, the router's path table, in file order. */
export function locationLines(conf: string): string[] {
  return conf
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('location '));
}

function replaceOnce(conf: string, pattern: RegExp, replacement: string): string {
  if (!pattern.test(conf))
    throw new Error(`infra/nginx/nginx.conf no longer has ${pattern}; update the e2e runtime copy`);
  return conf.replace(pattern, replacement);
}

/**
 * The runtime copy of nginx.conf for an unprivileged run on loopback: each `upstream` group
 * lists that service's replicas, and only the listen port, pid, access log, temp paths and console root change. The location table stays the file's own (checked).
 */
export function runtimeNginxConf(original: string, options: RuntimeNginxOptions): string {
  let conf = original;
  conf = replaceOnce(conf, /^pid .*;$/m, `pid ${options.dir}/nginx.pid;`);
  conf = replaceOnce(conf, /^worker_processes .*;$/m, 'worker_processes 1;');
  conf = replaceOnce(conf, /^(\s*)worker_connections .*;$/m, '$1worker_connections 1024;');
  conf = replaceOnce(conf, /^(\s*)access_log .*;.*$/m, `$1access_log ${options.dir}/access.log;`);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `  ${kind}_temp_path ${options.dir}/${kind}_temp;`)
    .join('\n');
  conf = replaceOnce(conf, /^http \{$/m, `http {\n${temp}`);
  conf = replaceOnce(conf, /^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${options.port};`);
  if (options.consoleRoot)
    conf = replaceOnce(conf, /^(\s*)root \/usr\/share\/nginx\/html;$/m, `$1root ${options.consoleRoot};`);
  // Each upstream group (its zone and keep-alive pool kept) gets the replicas instead of its re-resolved name.
  for (const name of ROUTER_UPSTREAMS) {
    const servers = options.upstreams[name]
      .map((address) => `    server ${address} max_fails=1 fail_timeout=5s;`)
      .join('\n');
    conf = replaceOnce(
      conf,
      new RegExp(`(upstream ${name} \\{[^}]*?)^\\s*server [^;]+ resolve;$`, 'm'),
      `$1${servers}`,
    );
  }
  const before = locationLines(original);
  const after = locationLines(conf);
  if (JSON.stringify(before) !== JSON.stringify(after))
    throw new Error('the runtime nginx.conf changed the location table');
  return conf;
}

/** Reads infra/nginx/nginx.conf. */
export const readRouterConf = (): Promise<string> => readFile(NGINX_CONF, 'utf8');
