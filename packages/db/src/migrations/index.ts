import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001_initial.js';
import * as audit from './0002_audit.js';
import * as externalIdentities from './0003_external_identities.js';
import * as confirmationCallHash from './0004_confirmation_call_hash.js';
import * as toolNames from './0005_tool_names.js';
import * as toolPins from './0006_tool_pins.js';
import * as agentToolSurface from './0008_agent_tool_surface.js';
import * as toolProviderUserAuth from './0010_tool_provider_user_auth.js';
import * as oauthClientAgents from './0011_oauth_client_agents.js';
import * as toolProviderMcpOauth from './0012_tool_provider_mcp_oauth.js';
import * as toolProviderTokenExchange from './0013_tool_provider_token_exchange.js';
import * as identityEvents from './0014_identity_events.js';
import * as keyChecks from './0015_key_checks.js';
import * as confirmationCarriers from './0016_confirmation_carriers.js';
import * as auditDecidedVia from './0017_audit_decided_via.js';
import * as auditJsonBodies from './0018_audit_json_bodies.js';
import * as oauthFlows from './0007_oauth_flows.js';
import * as oauthServer from './0009_oauth_server.js';

/**
 * Listed in code rather than read from a folder, so a bundled build carries its migrations.
 * Names sort in the order they run; never rename or edit one that has shipped.
 */
const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_audit': audit,
  '0003_external_identities': externalIdentities,
  '0004_confirmation_call_hash': confirmationCallHash,
  '0005_tool_names': toolNames,
  '0006_tool_pins': toolPins,
  '0007_oauth_flows': oauthFlows,
  '0008_agent_tool_surface': agentToolSurface,
  '0009_oauth_server': oauthServer,
  '0010_tool_provider_user_auth': toolProviderUserAuth,
  '0011_oauth_client_agents': oauthClientAgents,
  '0012_tool_provider_mcp_oauth': toolProviderMcpOauth,
  '0013_tool_provider_token_exchange': toolProviderTokenExchange,
  '0014_identity_events': identityEvents,
  '0015_key_checks': keyChecks,
  '0016_confirmation_carriers': confirmationCarriers,
  '0017_audit_decided_via': auditDecidedVia,
  '0018_audit_json_bodies': auditJsonBodies,
};

/** Names of every registered migration, in the order they apply. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrations).sort();

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
