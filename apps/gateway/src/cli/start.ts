import { ALL_KEYS, loadConfigWithKeys } from '@agentgw/service-kit';
import { relative } from 'node:path';
import { generateSecrets, loadOrCreateSecrets, missingSecrets, secretsPath } from '../dev-secrets.js';
import { DEFAULT_PORT, readEnvironment, type EnvironmentInput } from '../environment.js';
import { startGateway } from '../gateway.js';
import { DEFAULT_HOST, isLoopbackHost, publicUrlOf, startBanner } from '../listen-address.js';

/**
 * `gateway start`: outside production, missing secrets come from (or are created in)
 * `<dataDir>/secrets.json`; in production their absence is the ConfigError like any other.
 * The all-in-one runs every service, so it holds both sealing keys. It listens on loopback unless
 * HOST says otherwise, and there its public URL (MCP client sign-in) is derived from that address.
 */
export async function startCommand(input: EnvironmentInput): Promise<void> {
  const { env, dataDir } = readEnvironment(input);
  const missing = missingSecrets(env);
  if (missing.length > 0 && env.NODE_ENV !== 'production') {
    // What was given is checked before anything is written: a bad configuration leaves no secrets file behind.
    const placeholders = generateSecrets();
    loadConfigWithKeys('the gateway', ALL_KEYS, {
      ...env,
      ...Object.fromEntries(missing.map((name) => [name, placeholders[name]])),
    });
    const { secrets, generated } = loadOrCreateSecrets(dataDir);
    for (const name of missing) env[name] = secrets[name];
    const where = relative(input.cwd, secretsPath(dataDir));
    const created = missing.filter((name) => generated.includes(name));
    const reused = missing.filter((name) => !generated.includes(name));
    if (created.length > 0) {
      const them = created.length === 1 ? 'it' : 'them';
      console.log(
        `Generated ${names(created)} and stored ${them} in ${where} (owner-only); set ${them} in the environment for production.`,
      );
    }
    if (reused.length > 0) console.log(`Using ${names(reused)} from ${where}.`);
  }
  const host = env.HOST?.trim() || DEFAULT_HOST;
  // Open registration only where only this machine can reach it, unless the operator says otherwise.
  if (!env.ALLOW_SELF_REGISTRATION?.trim() && !isLoopbackHost(host)) env.ALLOW_SELF_REGISTRATION = 'false';
  const listening = loadConfigWithKeys('the gateway', ALL_KEYS, env);
  const publicUrl = publicUrlOf(listening.GATEWAY_PUBLIC_URL, { host, port: listening.PORT ?? DEFAULT_PORT });
  const config = publicUrl.kind === 'derived' ? { ...listening, GATEWAY_PUBLIC_URL: publicUrl.url } : listening;
  const gateway = await startGateway(config, { dataDir, hostname: host });
  const banner = startBanner({ host, port: gateway.port, publicUrl, selfRegistration: config.ALLOW_SELF_REGISTRATION });
  console.log(banner.join('\n')); // one write: whoever waits for the first line gets them all
}

/** `A`, `A and B`, `A, B and C`. */
const names = (list: readonly string[]): string =>
  list.length < 2 ? list.join('') : `${list.slice(0, -1).join(', ')} and ${list.at(-1)}`;
