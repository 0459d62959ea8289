import { loadConfig } from '@agentgw/core';
import { relative } from 'node:path';
import { loadOrCreateSecrets, missingSecrets, secretsPath } from '../dev-secrets.js';
import { readEnvironment, type EnvironmentInput } from '../environment.js';
import { startGateway } from '../gateway.js';

/**
 * `gateway start`: outside production, missing secrets come from (or are created in)
 * `<dataDir>/secrets.json`; in production their absence is the ConfigError like any other.
 */
export async function startCommand(input: EnvironmentInput): Promise<void> {
  const { env, dataDir } = readEnvironment(input);
  const missing = missingSecrets(env);
  if (missing.length > 0 && env.NODE_ENV !== 'production') {
    const { secrets, created } = loadOrCreateSecrets(dataDir);
    for (const name of missing) env[name] = secrets[name];
    const where = relative(input.cwd, secretsPath(dataDir));
    console.log(
      created
        ? `Generated ${missing.join(' and ')} and stored them in ${where} (owner-only); set them in the environment for production.`
        : `Using ${missing.join(' and ')} from ${where}.`,
    );
  }
  const config = loadConfig(env);
  const gateway = await startGateway(config, { dataDir });
  console.log(`Agent Gateway listening on http://localhost:${gateway.port}`);
}
