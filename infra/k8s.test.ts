import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

// The Kustomize manifests in k8s/, checked offline: they render, every object validates against
// the Kubernetes schema that kubernetes-models pins (its 5.x line is generated from Kubernetes
// v1.36's OpenAPI), no object carries a field the schema does not know, and the Ingress is the
// router's path table.

const here = import.meta.dirname;
const repo = join(here, '..');
/**
 * The manifests use kustomize 5 features (`labels` with `includeTemplates`, `patches` by
 * target), which kubectl embeds from 1.27 on; an older kubectl (Debian bookworm's
 * kubernetes-client is 1.20) cannot render them, so the check is skipped with the reason.
 */
function kubectlProblem(): string | undefined {
  const run = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  if (run.error || run.status !== 0) return 'kubectl is not installed';
  const kustomize = /Kustomize Version:\s*v(\d+)/.exec(run.stdout);
  if (!kustomize || Number(kustomize[1]) < 5)
    return `kubectl embeds no kustomize 5 (needs kubectl 1.27 or later; found: ${run.stdout.split('\n')[0]?.trim()})`;
  return undefined;
}
const kubectlSkipReason = kubectlProblem();
const hasKubectl = kubectlSkipReason === undefined;

interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  [field: string]: unknown;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  startupProbe?: { httpGet?: { path: string; port: string | number } };
}
interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: {
    containers: Container[];
    securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
    terminationGracePeriodSeconds?: number;
    volumes?: { name: string; configMap?: { name: string }; emptyDir?: object }[];
  };
}
interface Deployment extends K8sObject {
  spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: PodTemplate };
}
interface Job extends K8sObject {
  spec: { ttlSecondsAfterFinished?: number; template: PodTemplate };
}
interface Service extends K8sObject {
  spec: { selector: Record<string, string>; ports: { port: number; targetPort: string | number }[] };
}
interface Hpa extends K8sObject {
  spec: {
    scaleTargetRef: { kind: string; name: string };
    minReplicas: number;
    maxReplicas: number;
    metrics: { type: string; resource?: { name: string } }[];
  };
}
interface Pdb extends K8sObject {
  spec: { selector: { matchLabels: Record<string, string> } };
}
interface Ingress extends K8sObject {
  spec: {
    rules: {
      host?: string;
      http: {
        paths: { path: string; pathType: string; backend: { service: { name: string; port: { number?: number } } } }[];
      };
    }[];
  };
}

/** The services of DESIGN.md and the ports the router and compose give them. */
const SERVICES = ['admin-api', 'invoke-proxy', 'mcp-gateway', 'vault', 'confirmation-hub', 'audit-writer'];
/** Settings that are secrets: they may only come from the Secret, never a literal or the ConfigMap. */
const SECRET_KEYS = [
  'DATABASE_URL',
  'REDIS_URL',
  'JWT_SECRET',
  'CREDENTIAL_ENCRYPTION_KEY',
  'CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS',
  'PLATFORM_SECRETS_KEY',
  'PLATFORM_SECRETS_PREVIOUS_KEYS',
  'ADMIN_EMAIL',
  'ADMIN_PASSWORD',
  'APNS_PRIVATE_KEY',
  'FCM_SERVICE_ACCOUNT',
];
/** What every service cannot start without (packages/core/src/config.ts; distributed mode needs both stores). */
const REQUIRED_SECRET_KEYS = ['DATABASE_URL', 'REDIS_URL', 'JWT_SECRET'];
/**
 * The key boundary (service-kit's SERVICE_KEYS): the sealing keys, with their optional previous
 * keys, each service holds. Only the vault holds the credential key.
 */
const SEALING_KEYS: Record<string, string[]> = {
  vault: ['CREDENTIAL_ENCRYPTION_KEY', 'PLATFORM_SECRETS_KEY'],
  'admin-api': ['PLATFORM_SECRETS_KEY'],
  'invoke-proxy': ['PLATFORM_SECRETS_KEY'],
  'mcp-gateway': ['PLATFORM_SECRETS_KEY'],
  'confirmation-hub': [],
  'audit-writer': [],
};
const PREVIOUS_OF: Record<string, string> = {
  CREDENTIAL_ENCRYPTION_KEY: 'CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS',
  PLATFORM_SECRETS_KEY: 'PLATFORM_SECRETS_PREVIOUS_KEYS',
};

function render(dir: string): K8sObject[] {
  const out = execFileSync('kubectl', ['kustomize', join(here, 'k8s', dir)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return parseAllDocuments(out).map((doc) => doc.toJS() as K8sObject);
}

function find<T extends K8sObject>(objects: K8sObject[], kind: string, name: string): T {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered manifests`);
  return found as T;
}

function ofKind<T extends K8sObject>(objects: K8sObject[], kind: string): T[] {
  return objects.filter((o) => o.kind === kind) as T[];
}

/** The services' settings (`agentgw-config` plus kustomize's hash suffix), not the console's nginx config. */
function settingsConfigMap(objects: K8sObject[]): K8sObject & { data: Record<string, string> } {
  const found = ofKind<K8sObject & { data: Record<string, string> }>(objects, 'ConfigMap').filter((c) =>
    c.metadata.name.startsWith('agentgw-config-'),
  );
  if (found.length !== 1) throw new Error(`expected one agentgw-config ConfigMap, found ${found.length}`);
  return found[0]!;
}

/**
 * kustomize wraps a long base64 Secret value over several lines; the API server's base64 decoder
 * skips line breaks, the schema's `byte` format does not, so they are removed before validating.
 */
function asApiServerReads(o: K8sObject): K8sObject {
  if (o.kind !== 'Secret' || typeof o.data !== 'object' || o.data === null) return o;
  const data = Object.fromEntries(
    Object.entries(o.data).map(([k, v]) => [k, typeof v === 'string' ? v.replace(/[\r\n]/g, '') : v]),
  );
  return { ...o, data };
}

/** The schema check: kubernetes-models' model for the object's apiVersion/kind, then its OpenAPI validation. */
async function schemaErrors(objects: K8sObject[]): Promise<string[]> {
  const errors: string[] = [];
  for (const o of objects) {
    const where = `${o.kind} ${o.metadata.name}`;
    let model: new (data: unknown) => { validate(): void };
    try {
      const specifier = `kubernetes-models/${o.apiVersion}/${o.kind}`;
      const mod = (await import(/* @vite-ignore */ specifier)) as Record<string, typeof model>;
      model = mod[o.kind]!;
    } catch {
      errors.push(`${where}: no schema for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    try {
      new model(asApiServerReads(o)).validate();
    } catch (err) {
      errors.push(`${where}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return errors;
}

/**
 * The OpenAPI schema allows unknown fields (the API server drops them with a warning), so a typo
 * such as `readinesProbe` would pass it. TypeScript's excess-property check on the models'
 * interfaces catches those: each object becomes a typed literal in a virtual module.
 */
function unknownFieldErrors(objects: K8sObject[]): string[] {
  const file = join(here, '__rendered_manifests__.mts');
  const lines = objects.map((o, i) => {
    const name = `I${o.kind}`;
    return `import type { ${name} as T${i} } from 'kubernetes-models/${o.apiVersion}/${o.kind}';\nexport const o${i}: T${i} = ${JSON.stringify(o)};`;
  });
  const source = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, version, ...rest) =>
    name === file ? ts.createSourceFile(name, source, version) : getSourceFile.call(host, name, version, ...rest);
  host.fileExists = (name) => name === file || fileExists.call(host, name);
  host.readFile = (name) => (name === file ? source : readFile.call(host, name));
  const program = ts.createProgram([file], options, host);
  const sourceFile = program.getSourceFile(file)!;
  return ts.getPreEmitDiagnostics(program, sourceFile).map((d) => {
    const line = d.start === undefined ? -1 : sourceFile.getLineAndCharacterOfPosition(d.start).line;
    const o = objects[Math.floor(line / 2)];
    return `${o ? `${o.kind} ${o.metadata.name}` : 'manifests'}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

interface Route {
  match: 'exact' | 'prefix';
  path: string;
  backend: string;
}

interface NginxLocation {
  modifier: string;
  path: string;
  body: string;
}

/** nginx.conf with comments removed (quoted strings kept: a `#` or brace inside quotes is text). */
function stripComments(conf: string): string {
  let out = '';
  let quote = '';
  for (let i = 0; i < conf.length; i++) {
    const c = conf[i]!;
    if (quote) {
      if (c === '\\') {
        out += c + (conf[++i] ?? '');
        continue;
      }
      if (c === quote) quote = '';
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#') {
      while (i < conf.length && conf[i] !== '\n') i++;
      out += '\n';
      continue;
    }
    out += c;
  }
  return out;
}

/** Every `location` block of the router: its modifier, path and body (braces matched, quotes skipped). */
function nginxLocations(conf: string): NginxLocation[] {
  const text = stripComments(conf);
  const found: NginxLocation[] = [];
  for (const m of text.matchAll(/\blocation\s+(?:(=|\^~|~\*?)\s+)?(\S+)\s*\{/g)) {
    const start = m.index + m[0].length;
    let depth = 1;
    let quote = '';
    let i = start;
    for (; i < text.length && depth > 0; i++) {
      const c = text[i]!;
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = '';
      } else if (c === "'" || c === '"') quote = c;
      else if (c === '{') depth++;
      else if (c === '}') depth--;
    }
    found.push({ modifier: m[1] ?? '', path: m[2]!, body: text.slice(start, i - 1) });
  }
  return found;
}

/** The router's API table: every location that proxies, as match type, path and `service:port`. */
function nginxRoutes(conf: string): { api: Route[]; other: NginxLocation[] } {
  const text = stripComments(conf);
  // `proxy_pass http://<group>` names an `upstream <group> { server <service>:<port> resolve; … }`.
  const groups = new Map<string, string>();
  for (const m of text.matchAll(/\bupstream\s+(\w+)\s*\{([^}]*)\}/g)) {
    const servers = [...m[2]!.matchAll(/\bserver\s+(\S+?)(?:\s[^;]*)?;/g)].map((s) => s[1]!);
    if (servers.length !== 1)
      throw new Error(`upstream ${m[1]}: expected one server (the service's name), found ${servers.length}`);
    groups.set(m[1]!, `http://${servers[0]}`);
  }
  const api: Route[] = [];
  const other: NginxLocation[] = [];
  for (const loc of nginxLocations(conf)) {
    const pass = /\bproxy_pass\s+(\S+?);/.exec(loc.body);
    if (!pass) {
      other.push(loc);
      continue;
    }
    const target = groups.get(/^https?:\/\/(\w+)\/?$/.exec(pass[1]!)?.[1] ?? '') ?? pass[1];
    const url = /^https?:\/\/([\w.-]+):(\d+)\/?$/.exec(target ?? '');
    if (!url) throw new Error(`location ${loc.path}: proxy_pass ${pass[1]} is not http://service:port`);
    if (loc.modifier !== '' && loc.modifier !== '=' && loc.modifier !== '^~') {
      throw new Error(`location ${loc.modifier} ${loc.path}: a regex location has no Ingress equivalent`);
    }
    api.push({ match: loc.modifier === '=' ? 'exact' : 'prefix', path: loc.path, backend: `${url[1]}:${url[2]}` });
  }
  return { api, other };
}

function ingressRoutes(ingress: Ingress): Route[] {
  return ingress.spec.rules.flatMap((rule) =>
    rule.http.paths.map((p) => {
      if (p.pathType !== 'Exact' && p.pathType !== 'Prefix')
        throw new Error(`${p.path}: pathType ${p.pathType} is not portable`);
      return {
        match: p.pathType === 'Exact' ? ('exact' as const) : ('prefix' as const),
        path: p.path,
        backend: `${p.backend.service.name}:${p.backend.service.port.number}`,
      };
    }),
  );
}

/** A loopback port nothing listens on right now, for a child process to bind. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const byPath = (a: Route, b: Route) => a.path.localeCompare(b.path) || a.match.localeCompare(b.match);

/** The services' shutdown drain bound in seconds: serve.ts's default `shutdownTimeoutMs`. */
function drainBoundSeconds(): number {
  const serve = readFileSync(join(repo, 'packages', 'service-kit', 'src', 'serve.ts'), 'utf8');
  const m = /shutdownTimeoutMs\s*\?\?\s*([\d_]+)/.exec(serve);
  if (!m)
    throw new Error(
      'cannot find the drain bound (shutdownTimeoutMs default) in service-kit/src/serve.ts; update this test and terminationGracePeriodSeconds',
    );
  return Number(m[1]!.replaceAll('_', '')) / 1000;
}

if (!hasKubectl) it.skip(`${kubectlSkipReason}: the Kubernetes manifests were not rendered or checked`, () => {});

describe.runIf(hasKubectl)('Kubernetes manifests (kubectl kustomize, offline)', () => {
  const example = hasKubectl ? render('overlays/example') : [];
  const base = hasKubectl ? render('base') : [];

  it('renders the example overlay and the base', () => {
    const kinds = (objs: K8sObject[]) => new Set(objs.map((o) => o.kind));
    for (const k of [
      'Deployment',
      'Service',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'Job',
      'Ingress',
      'ConfigMap',
    ]) {
      expect(kinds(base), k).toContain(k);
      expect(kinds(example), k).toContain(k);
    }
    expect(kinds(example)).toContain('Secret');
    expect(kinds(example)).toContain('Namespace');
  });

  it('validates every object against the pinned Kubernetes schema', async () => {
    expect(await schemaErrors(example)).toEqual([]);
    expect(await schemaErrors(base)).toEqual([]);
  });

  it('uses no field the Kubernetes schema does not know', () => {
    expect(unknownFieldErrors(example)).toEqual([]);
  });

  it('catches a broken manifest (the checks are not vacuous)', async () => {
    const broken = structuredClone(find<Deployment>(example, 'Deployment', 'vault'));
    (broken.spec.template.spec.containers[0] as unknown as Record<string, unknown>).readinesProbe = {
      httpGet: { path: '/health', port: 'http' },
    };
    expect(unknownFieldErrors([broken]).join('\n')).toMatch(/readinesProbe/);
    const wrongType = structuredClone(find<Deployment>(example, 'Deployment', 'vault'));
    (wrongType.spec.template.spec.containers[0]!.ports![0] as { containerPort: unknown }).containerPort = 'seven';
    expect((await schemaErrors([wrongType])).join('\n')).toMatch(/containerPort must be integer/);
  });

  it('puts every object of the example in its namespace', () => {
    for (const o of example.filter((o) => o.kind !== 'Namespace'))
      expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBe('agentgw');
  });

  describe('the Ingress is the router path table', () => {
    const conf = readFileSync(join(here, 'nginx', 'nginx.conf'), 'utf8');
    const router = nginxRoutes(conf);

    it('exposes exactly the API locations of nginx.conf, each to the same service and port', () => {
      const ingress = ingressRoutes(find<Ingress>(example, 'Ingress', 'agentgw'));
      expect(router.api.length).toBeGreaterThan(10);
      const apiKeys = new Set(router.api.map((r) => `${r.match} ${r.path}`));
      // The router's other locations serve the console or 404s: in Kubernetes the console's own
      // nginx answers them, behind one catch-all rule after the API paths.
      const extra = ingress.filter((r) => !apiKeys.has(`${r.match} ${r.path}`));
      expect(extra.map((r) => `${r.match} ${r.path} ${r.backend.split(':')[0]}`)).toEqual(['prefix / dashboard']);
      expect(ingress.at(-1)).toEqual(extra[0]);
      expect(ingress.filter((r) => apiKeys.has(`${r.match} ${r.path}`)).sort(byPath)).toEqual(
        [...router.api].sort(byPath),
      );
    });

    it('never exposes /internal/', () => {
      expect(router.other.some((l) => l.path === '/internal/' && /return\s+404/.test(l.body))).toBe(true);
      for (const r of ingressRoutes(find<Ingress>(example, 'Ingress', 'agentgw')))
        expect(r.path.startsWith('/internal')).toBe(false);
    });

    it('reaches each backend on the port its Service and container listen on', () => {
      for (const r of router.api) {
        const [name, port] = r.backend.split(':');
        const svc = find<Service>(example, 'Service', name!);
        expect(svc.spec.ports.map((p) => p.port)).toContain(Number(port));
        const container = find<Deployment>(example, 'Deployment', name!).spec.template.spec.containers[0]!;
        expect(container.ports?.[0]?.containerPort).toBe(Number(port));
        expect(container.env?.find((e) => e.name === 'PORT')?.value).toBe(port);
      }
    });

    it('sets the overlay host', () => {
      expect(find<Ingress>(example, 'Ingress', 'agentgw').spec.rules.map((r) => r.host)).toEqual([
        'gateway.example.com',
      ]);
    });

    it('parses nginx locations with quoted braces and comments, and upstream groups', () => {
      const sample = `upstream x { zone z 64k; server a:2 resolve; keepalive 8; }\nserver { # location /commented/ { }\n location = /a { proxy_pass http://x; }\n location / { return 404 '{"code":"}"}'; }\n location /b/ { proxy_pass http://b:1; } }`;
      expect(nginxRoutes(sample).api).toEqual([
        { match: 'exact', path: '/a', backend: 'a:2' },
        { match: 'prefix', path: '/b/', backend: 'b:1' },
      ]);
      expect(nginxRoutes(sample).other.map((l) => l.path)).toEqual(['/']);
    });
  });

  describe.each(SERVICES)('%s', (service) => {
    const deployment = hasKubectl ? find<Deployment>(example, 'Deployment', service) : undefined;
    const pod = deployment?.spec.template;
    const container = pod?.spec.containers[0];

    it('runs its own image, tagged by the overlay', () => {
      expect(container?.image).toBe(`agentgw/${service}:0.1.0`);
    });

    it('has a Service, a CPU autoscaler and a disruption budget that select its pods', () => {
      const labels = pod!.metadata.labels;
      const matches = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
      expect(matches(deployment!.spec.selector.matchLabels)).toBe(true);
      expect(matches(find<Service>(example, 'Service', service).spec.selector)).toBe(true);
      expect(matches(find<Pdb>(example, 'PodDisruptionBudget', service).spec.selector.matchLabels)).toBe(true);
      const hpa = find<Hpa>(example, 'HorizontalPodAutoscaler', service);
      expect(hpa.apiVersion).toBe('autoscaling/v2');
      expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: service });
      expect(hpa.spec.metrics.map((m) => m.resource?.name)).toContain('cpu');
      expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
      expect(container?.resources?.requests?.cpu, 'the CPU autoscaler needs a CPU request').toBeDefined();
      expect(container?.resources?.requests?.memory).toBeDefined();
      expect(container?.resources?.limits?.memory).toBeDefined();
    });

    it('probes /health/live for start-up and liveness, /health/ready for readiness, on its http port', () => {
      expect(container?.startupProbe?.httpGet).toEqual({ path: '/health/live', port: 'http' });
      expect(container?.livenessProbe?.httpGet).toEqual({ path: '/health/live', port: 'http' });
      expect(container?.readinessProbe?.httpGet).toEqual({ path: '/health/ready', port: 'http' });
      expect(container?.ports?.[0]?.name).toBe('http');
    });

    it('runs as non-root on a read-only root filesystem without privilege escalation', () => {
      expect(pod?.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(container?.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
    });

    it('gives the pod time for the preStop pause, the drain bound and closing its pools', () => {
      const pause = Number(container?.lifecycle?.preStop?.exec?.command.at(-1));
      const grace = pod?.spec.terminationGracePeriodSeconds ?? 30;
      expect(pause).toBeGreaterThan(0);
      expect(grace).toBeGreaterThanOrEqual(pause + drainBoundSeconds());
      expect(grace).toBeLessThanOrEqual(pause + drainBoundSeconds() + 15);
    });

    it('takes settings from the ConfigMap and secrets only from the Secret', () => {
      const secretName = ofKind(example, 'Secret')[0]!.metadata.name;
      const configName = settingsConfigMap(example).metadata.name;
      expect(container?.envFrom).toEqual([{ configMapRef: { name: configName } }]);
      for (const key of REQUIRED_SECRET_KEYS) {
        expect(container?.env?.find((e) => e.name === key)?.valueFrom?.secretKeyRef, key).toEqual({
          name: secretName,
          key,
        });
      }
      for (const e of container?.env ?? []) {
        if (SECRET_KEYS.includes(e.name)) expect(e.value, `${e.name} must come from the Secret`).toBeUndefined();
      }
    });

    it('holds only its own sealing keys: the credential key in the vault alone', () => {
      const secretName = ofKind(example, 'Secret')[0]!.metadata.name;
      const held = (container?.env ?? []).filter(
        (e) => e.name in PREVIOUS_OF || Object.values(PREVIOUS_OF).includes(e.name),
      );
      const expected = SEALING_KEYS[service]!.flatMap((key) => [
        { name: key, valueFrom: { secretKeyRef: { name: secretName, key } } },
        {
          name: PREVIOUS_OF[key]!,
          valueFrom: { secretKeyRef: { name: secretName, key: PREVIOUS_OF[key]!, optional: true } },
        },
      ]);
      expect(held).toEqual(expected);
    });
  });

  describe('dashboard (the web console)', () => {
    const deployment = hasKubectl ? find<Deployment>(example, 'Deployment', 'dashboard') : undefined;
    const pod = deployment?.spec.template;
    const container = pod?.spec.containers[0];
    /** The nginx config the pod runs: the `-c` file of its command, read from the mounted ConfigMap. */
    const podConfig = (): { path: string; text: string; readOnly?: boolean } => {
      const command = container!.command!;
      const path = command[command.indexOf('-c') + 1]!;
      const mount = container!.volumeMounts!.find((m) => m.mountPath === path.slice(0, path.lastIndexOf('/')))!;
      const volume = pod!.spec.volumes!.find((v) => v.name === mount.name)!;
      const cm = find<K8sObject & { data: Record<string, string> }>(example, 'ConfigMap', volume.configMap!.name);
      return { path, text: cm.data[path.slice(path.lastIndexOf('/') + 1)]!, readOnly: mount.readOnly };
    };
    const router = nginxLocations(readFileSync(join(here, 'nginx', 'nginx.conf'), 'utf8'));

    it('runs the router image (the console build), tagged by the overlay, with its config from the ConfigMap', () => {
      expect(container?.image).toBe('agentgw/router:0.1.0');
      const dockerfile = readFileSync(join(here, 'nginx', 'Dockerfile'), 'utf8');
      expect(dockerfile).toMatch(/-t agentgw\/router /);
      const copied = /COPY --from=console \S+\/apps\/dashboard\/dist (\S+)/.exec(dockerfile)?.[1];
      const { text, readOnly } = podConfig();
      expect(copied).toBeDefined();
      expect(/\broot\s+(\S+);/.exec(stripComments(text))?.[1]).toBe(copied);
      expect(readOnly).toBe(true);
    });

    it('never proxies and answers every non-API path as the router does', () => {
      const { text } = podConfig();
      expect(stripComments(text)).not.toMatch(/\bproxy_pass\b/);
      const shape = (l: NginxLocation) => `${l.modifier} ${l.path} { ${l.body.replace(/\s+/g, ' ').trim()} }`;
      const routerOther = router.filter((l) => !/\bproxy_pass\b/.test(l.body)).map(shape);
      expect(routerOther.length).toBeGreaterThan(3);
      expect(nginxLocations(text).map(shape).sort()).toEqual(routerOther.sort());
    });

    it('is the Ingress catch-all, reached on the port its Service and container listen on', () => {
      const rule = find<Ingress>(example, 'Ingress', 'agentgw').spec.rules[0]!.http.paths.at(-1)!;
      expect(rule).toMatchObject({ path: '/', pathType: 'Prefix', backend: { service: { name: 'dashboard' } } });
      const svc = find<Service>(example, 'Service', 'dashboard');
      const port = svc.spec.ports.find((p) => p.port === rule.backend.service.port.number);
      expect(port?.targetPort).toBe('http');
      const http = container?.ports?.find((p) => p.name === 'http');
      expect(/\blisten\s+(\d+);/.exec(stripComments(podConfig().text))?.[1]).toBe(String(http?.containerPort));
    });

    it('has a Service, a CPU autoscaler and a disruption budget that select its pods, and CPU and memory bounds', () => {
      const labels = pod!.metadata.labels;
      const matches = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
      expect(matches(deployment!.spec.selector.matchLabels)).toBe(true);
      expect(matches(find<Service>(example, 'Service', 'dashboard').spec.selector)).toBe(true);
      expect(matches(find<Pdb>(example, 'PodDisruptionBudget', 'dashboard').spec.selector.matchLabels)).toBe(true);
      expect(find<Hpa>(example, 'HorizontalPodAutoscaler', 'dashboard').spec.scaleTargetRef).toMatchObject({
        kind: 'Deployment',
        name: 'dashboard',
      });
      expect(container?.resources?.requests?.cpu).toBeDefined();
      expect(container?.resources?.limits?.memory).toBeDefined();
    });

    it('probes a path its nginx serves, on its http port', () => {
      for (const probe of [container?.startupProbe, container?.readinessProbe, container?.livenessProbe]) {
        expect(probe?.httpGet).toEqual({ path: '/index.html', port: 'http' });
      }
    });

    it('runs as non-root on a read-only root filesystem, writing only to its emptyDir', () => {
      expect(pod?.spec.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod?.spec.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(container?.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      const emptyDirs = new Set(pod!.spec.volumes!.filter((v) => v.emptyDir).map((v) => v.name));
      const writable = container!.volumeMounts!.filter((m) => emptyDirs.has(m.name)).map((m) => `${m.mountPath}/`);
      const written = [...stripComments(podConfig().text).matchAll(/^\s*(?:pid|\w+_temp_path)\s+(\S+);/gm)].map(
        (m) => m[1]!,
      );
      // nginx writes its pid and the five temp paths (created at start even when unused).
      expect(written).toHaveLength(6);
      for (const path of written)
        expect(
          writable.some((dir) => path.startsWith(dir)),
          path,
        ).toBe(true);
      expect(pod?.spec.terminationGracePeriodSeconds).toBeGreaterThan(
        Number(container?.lifecycle?.preStop?.exec?.command.at(-1)),
      );
    });

    it('gets no setting and no secret (the services’ defaults are not patched onto it)', () => {
      expect(container?.env).toBeUndefined();
      expect(container?.envFrom).toBeUndefined();
    });

    it.runIf(spawnSync('nginx', ['-v']).status === 0)(
      'serves the console with its SPA fallback and cache headers, and JSON 404s for the API, when run',
      async () => {
        const dir = mkdtempSync(join(tmpdir(), 'console-nginx-'));
        chmodSync(dir, 0o755); // nginx workers run as `nobody` when the test runs as root
        mkdirSync(join(dir, 'html', 'assets'), { recursive: true });
        const index = '<!doctype html><title>console</title><div id="root"></div>';
        writeFileSync(join(dir, 'html', 'index.html'), index);
        writeFileSync(join(dir, 'html', 'assets', 'index-Abc123.js'), 'console.log(1);');
        const port = await freePort();
        // The pod's config, moved from its mounts to this folder and from 8080 to a loopback port.
        const { text, path } = podConfig();
        const conf = text
          .replaceAll('/tmp/', `${dir}/`)
          .replaceAll('/usr/share/nginx/html', join(dir, 'html'))
          .replace(/\blisten\s+\d+;/, `listen 127.0.0.1:${port};`);
        writeFileSync(join(dir, 'nginx.conf'), conf);
        const args = container!.command!.slice(1).map((a) => (a === path ? join(dir, 'nginx.conf') : a));
        const nginx = spawn('nginx', [...args, '-p', `${dir}/`], { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        nginx.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const base = `http://127.0.0.1:${port}`;
        try {
          for (let i = 0; ; i++) {
            if (nginx.exitCode !== null) throw new Error(`nginx exited ${nginx.exitCode}: ${stderr}`);
            if (
              await fetch(`${base}/index.html`).then(
                () => true,
                () => false,
              )
            )
              break;
            if (i > 100) throw new Error(`nginx did not answer: ${stderr}`);
            await new Promise((r) => setTimeout(r, 50));
          }
          const page = await fetch(`${base}/credentials?serviceType=github`);
          expect(page.status).toBe(200);
          expect(await page.text()).toBe(index);
          expect(page.headers.get('cache-control')).toBe('no-cache');
          const asset = await fetch(`${base}/assets/index-Abc123.js`);
          expect(asset.status).toBe(200);
          expect(asset.headers.get('content-type')).toMatch(/javascript/);
          expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
          expect((await fetch(`${base}/assets/missing.js`)).status).toBe(404);
          const api = await fetch(`${base}/api/v1/no-such-route`);
          expect(api.status).toBe(404);
          expect(api.headers.get('content-type')).toMatch(/^application\/json/);
          expect(await api.json()).toEqual({ code: 'NOT_FOUND', message: 'No such route' });
          for (const p of ['/internal/keys', '/metrics']) expect((await fetch(`${base}${p}`)).status, p).toBe(404);
        } finally {
          nginx.kill('SIGQUIT');
          await new Promise((r) => (nginx.exitCode !== null ? r(undefined) : nginx.once('exit', r)));
          rmSync(dir, { recursive: true, force: true });
        }
      },
    );
  });

  it('runs two replicas of mcp-gateway and confirmation-hub in the example, with the autoscaler floor to match', () => {
    for (const service of ['mcp-gateway', 'confirmation-hub']) {
      expect(find<Deployment>(example, 'Deployment', service).spec.replicas).toBe(2);
      expect(find<Hpa>(example, 'HorizontalPodAutoscaler', service).spec.minReplicas).toBe(2);
    }
  });

  it('runs the migration as a Job from the admin-api image, with the command compose uses', () => {
    const job = find<Job>(example, 'Job', 'migrate');
    const container = job.spec.template.spec.containers[0]!;
    const compose = parse(readFileSync(join(repo, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: { migrate: { command: string[]; build: { args: { SERVICE: string } } } };
    };
    expect(compose.services.migrate.build.args.SERVICE).toBe('admin-api');
    expect(container.image).toBe(
      find<Deployment>(example, 'Deployment', 'admin-api').spec.template.spec.containers[0]!.image,
    );
    expect(container.command).toEqual(compose.services.migrate.command);
    expect(container.env?.find((e) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef?.key).toBe('DATABASE_URL');
    expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
    expect(job.spec.template.spec.securityContext?.runAsNonRoot).toBe(true);
    expect(container.securityContext?.readOnlyRootFilesystem).toBe(true);
  });

  it("applies what the migration needs, and no service, with the README's first-step selector", () => {
    // `-l 'app.kubernetes.io/component notin (service,console)'` also matches objects without the label.
    const first = example.filter(
      (o) => !['service', 'console'].includes(o.metadata.labels?.['app.kubernetes.io/component'] ?? ''),
    );
    expect(first.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Ingress', 'Job', 'Namespace', 'Secret']);
  });

  it('keeps secrets out of the base and every required key in the example Secret', () => {
    expect(ofKind(base, 'Secret')).toEqual([]);
    const secret = ofKind<K8sObject & { data: Record<string, string> }>(example, 'Secret');
    expect(secret).toHaveLength(1);
    for (const key of [...REQUIRED_SECRET_KEYS, 'CREDENTIAL_ENCRYPTION_KEY', 'PLATFORM_SECRETS_KEY'])
      expect(Object.keys(secret[0]!.data)).toContain(key);
  });

  it('only sets configuration variables the services know, and no secret in the ConfigMap', () => {
    const config = readFileSync(join(repo, 'packages', 'core', 'src', 'config.ts'), 'utf8');
    const cm = settingsConfigMap(example);
    const secret = ofKind<K8sObject & { data: Record<string, string> }>(example, 'Secret')[0]!;
    const envNames = ofKind<Deployment>(example, 'Deployment').flatMap((d) =>
      d.spec.template.spec.containers.flatMap((c) => (c.env ?? []).map((e) => e.name)),
    );
    for (const key of [...Object.keys(cm.data), ...Object.keys(secret.data), ...envNames]) {
      expect(config, `${key} is not a setting of packages/core/src/config.ts`).toMatch(new RegExp(`^\\s+${key}:`, 'm'));
    }
    for (const key of SECRET_KEYS) expect(Object.keys(cm.data)).not.toContain(key);
  });
});
