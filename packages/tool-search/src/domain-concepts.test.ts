import { describe, expect, it } from 'vitest';
import { DOMAIN_CONCEPTS } from './domain-concepts.js';
import { READING_VERBS } from './query-intent.js';
import { ACTION_VOCABULARY } from './software-vocabulary.js';
import { stem } from './terms.js';
import { ToolIndex } from './tool-index.js';

// Domain concepts: goals that share no word with the tool that meets them.
const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object' } });
const index = ToolIndex.build([
  tool('maps_elevation', 'Get elevation data for locations on the earth.'),
  tool('maps_geocode', 'Convert an address into geographic coordinates.'),
  tool('browser_handle_dialog', 'Handle a dialog.'),
  tool('browser_click', 'Click an element on the page.'),
  tool('get_browser_storage', 'List localStorage and sessionStorage entries of the page.'),
  tool('list_saved_payment_methods', 'List the payment methods saved for a customer.'),
  tool('list_customers', 'List the customers of the account.'),
  tool('create_index', 'Create an index for a collection.'),
  tool('find', 'Run a find query against a collection.'),
  tool('search_code', 'Search for code across repositories.'),
  tool('fork_repository', 'Fork a repository to your account.'),
  tool('create_repository', 'Create a new repository in your account.'),
  tool('maps_directions', 'Get directions between two points.'),
  tool('optimization_tool', 'Find the optimal route through a set of coordinates.'),
  tool('list_credit_balances', 'List credit balances in each currency for a customer.'),
  tool('replay_notification', 'Resend a delivered or failed notification using its ID.'),
  tool('browser_emulate_media', 'Emulate CSS media features for the page.'),
  tool('git_add', 'Adds file contents to the staging area.'),
  tool('cancel_subscription', 'Cancel a subscription.'),
  tool('create_issue', 'Create a new issue in a repository.'),
  tool('get_logs', 'Get the logs of a pod.'),
  tool('kubectl_describe', 'Describe a Kubernetes resource.'),
  tool('insert_many', 'Insert an array of documents into a collection.'),
  tool('browser_select_option', 'Select an option.'),
  tool('create_firewall_rule', 'Create a firewall rule for a zone.'),
  tool('create_ingress', 'Create an ingress for a service.'),
  tool('create_payout', 'Send funds from the balance to a bank account.'),
]);
const first = (query: string) => index.search(query, 3)[0]?.name;

describe('domain concepts', () => {
  it('reads a goal as the action that meets it', () => {
    expect(first('how high above sea level is Denver')).toBe('maps_elevation');
    expect(first('accept the confirm popup')).toBe('browser_handle_dialog');
    expect(first('what cookies has this site set')).toBe('get_browser_storage');
    expect(first('which cards does this customer have on file')).toBe('list_saved_payment_methods');
    // The query's own word ("queries") still counts: the index tool joins the query tool at the top.
    expect(index.search('queries on email are slow, fix that', 2).map((h) => h.name)).toContain('create_index');
  });

  it('reads the goals users of each kind of server state (round 4)', () => {
    expect(first('show me the call sites of parseConfig')).toBe('search_code');
    expect(first('I want my own copy of that repo to experiment in')).toBe('fork_repository');
    expect(first('the fastest delivery route for these stops')).toBe('optimization_tool');
    expect(first('walk from the station to the museum')).toBe('maps_directions');
    expect(first('how much account credit does ctm_9 have left')).toBe('list_credit_balances');
    expect(first('our webhook failed overnight, redeliver it')).toBe('replay_notification');
    expect(first('check the page in dark mode')).toBe('browser_emulate_media');
    expect(first('get these files ready to commit')).toBe('git_add');
    expect(first('Acme churned yesterday')).toBe('cancel_subscription');
    expect(first('move the money to our bank')).toBe('create_payout');
    expect(first('the app crashes when the upload is empty')).toBe('create_issue');
    expect(first('why is my pod still pending')).toBe('kubectl_describe');
    expect(first('seed the users collection with sample data')).toBe('insert_many');
    expect(first('pick Canada from the list of countries')).toBe('browser_select_option');
    expect(first('rate limit the login endpoint')).toBe('create_firewall_rule');
    expect(first('expose the web app to the internet')).toBe('create_ingress');
  });

  it('leaves a query that says no such goal alone', () => {
    expect(first('click the submit button')).toBe('browser_click');
    expect(first('find the users named Ana')).toBe('find');
  });

  it('has no one-word phrase that stems to an action verb ("finding" would read every "find" as the goal)', () => {
    const verbs = new Set([
      ...READING_VERBS,
      ...ACTION_VOCABULARY.map((line) => stem(line.slice(0, line.search(/[ :]/)))),
    ]);
    const oneWord = DOMAIN_CONCEPTS.flatMap((line) =>
      line
        .slice(line.indexOf(':') + 1)
        .split('|')
        .map((phrase) => phrase.trim())
        .filter((phrase) => !phrase.includes(' ')),
    );
    expect(oneWord.filter((phrase) => verbs.has(stem(phrase)))).toEqual([]);
  });
});
