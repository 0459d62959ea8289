import { recordIdentityEvent } from '@agentgw/audit';
import { isMcpResource, type Principal } from '@agentgw/auth';
import { ForbiddenError, NotFoundError, ValidationError } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors, type default as Provider } from 'oidc-provider';

/** The browser asking, as the Node request and response carrying its cookies (none outside the Node server). */
export type AskingBrowser = { req: IncomingMessage; res: ServerResponse } | undefined;

/** Where the code goes once approved: a web origin, or a program on this computer (loopback or a private scheme). */
export type RedirectTarget = { kind: 'origin'; origin: string } | { kind: 'this_computer' };

/** What the consent screen shows: who asks (the client), for which endpoint (resource) and which scopes. */
export interface InteractionView {
  uid: string;
  client: { id: string; name: string | null; uri: string | null };
  redirect: RedirectTarget;
  resource: string;
  scopes: string[];
  /** The user consented to this client, endpoint and scopes before: the console may go on without asking. */
  remembered: boolean;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Where `redirectUri` (one the request carries, already matched against the client's) sends the code. */
export function redirectTargetOf(redirectUri: string): RedirectTarget {
  const url = new URL(redirectUri);
  const web = url.protocol === 'https:' || url.protocol === 'http:';
  return web && !LOOPBACK_HOSTS.has(url.hostname) ? { kind: 'origin', origin: url.origin } : { kind: 'this_computer' };
}

const startedElsewhere = () =>
  new ForbiddenError(
    'This sign-in was started in another browser. Only the browser that opened it may answer: start again from your MCP client on this computer',
    'STARTED_ELSEWHERE',
  );

/**
 * Refuses any browser but the one that started the sign-in `uid`: oidc-provider's interaction cookie
 * (set by /oauth/authorize, scoped to this API path) must name it. That browser alone collects the
 * code, so an answer from any other would hand the victim's grant to whoever started the request.
 */
async function assertStartedHere(provider: Provider, browser: AskingBrowser, uid: string): Promise<void> {
  if (browser === undefined) throw startedElsewhere();
  const started = await provider.interactionDetails(browser.req, browser.res).catch((err: unknown) => {
    if (err instanceof errors.SessionNotFound) return undefined;
    throw err;
  });
  if (started?.uid !== uid) throw startedElsewhere();
}

const notFound = () =>
  new NotFoundError(
    'This sign-in request is unknown or has expired; start again from your MCP client',
    'INTERACTION_NOT_FOUND',
  );

/**
 * The pending sign-in `uid` with its client, endpoint and scopes; 404 INTERACTION_NOT_FOUND when unknown, expired or
 * not for an MCP endpoint, 403 STARTED_ELSEWHERE when `browser` is not the one that started it.
 */
export async function interactionOf(provider: Provider, issuer: string, uid: string, browser: AskingBrowser) {
  const interaction = await provider.Interaction.find(uid);
  if (!interaction) throw notFound();
  const clientId = interaction.params.client_id;
  const resource = interaction.params.resource;
  const redirectUri = interaction.params.redirect_uri;
  if (
    typeof clientId !== 'string' ||
    typeof resource !== 'string' ||
    typeof redirectUri !== 'string' ||
    !isMcpResource(issuer, resource)
  )
    throw notFound();
  await assertStartedHere(provider, browser, uid);
  const client = await provider.Client.find(clientId);
  if (!client) throw notFound();
  const scope = typeof interaction.params.scope === 'string' ? interaction.params.scope : '';
  const scopes = [...new Set(scope.split(' ').filter((s) => s !== ''))].sort();
  return { interaction, client, resource, scopes, redirect: redirectTargetOf(redirectUri) };
}

/** The scopes `userId` allowed `clientId` on `resource` before (remembered), or null when never. */
async function rememberedScopes(
  db: Kysely<Database>,
  userId: string,
  clientId: string,
  resource: string,
): Promise<Set<string> | null> {
  const consent = await db
    .selectFrom('oauth_consents')
    .select(['scopes'])
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .where('resource', '=', resource)
    .executeTakeFirst();
  return consent ? new Set(consent.scopes.split(' ')) : null;
}

/** The pending sign-in `uid` as the signed-in user's consent screen shows it. */
export async function viewInteraction(
  db: Kysely<Database>,
  provider: Provider,
  issuer: string,
  user: Principal & { userId: string },
  uid: string,
  browser: AskingBrowser,
): Promise<InteractionView> {
  const { client, resource, scopes, redirect } = await interactionOf(provider, issuer, uid, browser);
  const granted = await rememberedScopes(db, user.userId, client.clientId, resource);
  return {
    uid,
    client: {
      id: client.clientId,
      name: typeof client.clientName === 'string' ? client.clientName : null,
      uri: typeof client.clientUri === 'string' ? client.clientUri : null,
    },
    redirect,
    resource,
    scopes,
    remembered: granted !== null && scopes.every((s) => granted.has(s)),
  };
}

/**
 * The user's answer to a pending sign-in: approving signs them in, grants the client the
 * endpoint and scopes (remembered for next time), denying answers the client `access_denied`.
 * Answers where the browser goes next: the authorization endpoint's resume URL.
 */
export async function answerInteraction(
  db: Kysely<Database>,
  provider: Provider,
  issuer: string,
  user: Principal & { userId: string },
  uid: string,
  browser: AskingBrowser,
  decision: 'approve' | 'deny',
): Promise<{ redirectTo: string }> {
  const { interaction, client, resource, scopes } = await interactionOf(provider, issuer, uid, browser);
  const event = { actorId: user.userId, userId: user.userId, tenantId: user.tenantId, clientId: client.clientId };
  if (decision === 'deny') {
    interaction.result = { error: 'access_denied', error_description: 'The user did not allow this client' };
    await recordIdentityEvent(db, { ...event, type: 'oauth.consent_denied', details: { resource, scopes } });
  } else {
    if (scopes.length === 0) throw new ValidationError('The client asked for no scope');
    const grant = new provider.Grant({ accountId: user.userId, clientId: client.clientId });
    // oidc-provider checks the requested scopes against the grant's OP scopes (every configured
    // scope, `mcp` included) and the resource's scopes against its resource scopes: grant both.
    grant.addOIDCScope(scopes.join(' '));
    grant.addResourceScope(resource, scopes.filter((s) => s !== 'openid' && s !== 'offline_access').join(' '));
    const grantId = await grant.save();
    interaction.result = { login: { accountId: user.userId }, consent: { grantId } };
    const remembered = await rememberedScopes(db, user.userId, client.clientId, resource);
    await db
      .insertInto('oauth_consents')
      .values({ user_id: user.userId, client_id: client.clientId, resource, scopes: scopes.join(' ') })
      .onConflict((oc) => oc.columns(['user_id', 'client_id', 'resource']).doUpdateSet({ scopes: scopes.join(' ') }))
      .execute();
    const reused = remembered !== null && scopes.every((s) => remembered.has(s));
    await recordIdentityEvent(db, {
      ...event,
      type: reused ? 'oauth.consent_reused' : 'oauth.consent_given',
      details: { resource, scopes, grantId },
    });
  }
  await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
  return { redirectTo: interaction.returnTo };
}
