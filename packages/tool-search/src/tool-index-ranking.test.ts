import { describe, expect, it } from 'vitest';
import { namedWords } from './provider-naming.js';
import { queryEntities } from './query-entities.js';
import { nameAction, readIntent } from './query-intent.js';
import { queryTerms } from './query-terms.js';
import { stem } from './terms.js';
import { ToolIndex, type ProviderLabel } from './tool-index.js';

// Issue 35's ranking fixes, each on a small catalog written for the test.
const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object' } });
type Tool = ReturnType<typeof tool>;

/** An index whose tools carry providers, as the gateway and the bench build it. */
function withProviders(entries: readonly [Tool, ProviderLabel][]) {
  const providers = new Map(entries);
  return ToolIndex.build(
    entries.map(([t]) => t),
    (t) => providers.get(t) ?? null,
  );
}

describe('expansion guards', () => {
  it('reads a PascalCase brand as one name: "GitHub" finds github_… tools, not git ones', () => {
    const index = ToolIndex.build([
      tool('git_log', 'Show the git log of a local checkout.'),
      tool('hub_devices', 'List the devices on a USB hub.'),
      tool('github_list_repos', 'List the repositories of an account.'),
    ]);
    expect(index.search('my GitHub stuff', 3)[0]?.name).toBe('github_list_repos');
    // The parts stay searchable, but weak and unexpanded.
    expect(queryTerms('GitHub').get('github')?.weight).toBe(1);
    expect(queryTerms('GitHub').get('git')?.weight).toBeLessThan(1);
  });

  it('leaves a pair of everyday words ("read/write", "and/or") as words, not an owner/name repository', () => {
    expect(queryEntities('give Ana read/write access').words).toEqual([]);
    expect(queryEntities('tags and/or labels').words).toEqual([]);
    expect(queryEntities('open an issue in acme/web').words).toEqual(['repository']);
    const index = ToolIndex.build([
      tool('repo_get', 'Get a repository.'),
      tool('share_file', 'Share a file and set read or write access.'),
    ]);
    expect(index.search('give Ana read/write access', 2)[0]?.name).toBe('share_file');
  });
});

describe('exact wording first', () => {
  const gridtable = { name: 'gridtable', title: 'Gridtable' };
  const index = withProviders([
    [tool('list_bases', 'List all accessible Gridtable bases.'), gridtable],
    [tool('list_tables', 'List all tables in a specific base.'), gridtable],
    [tool('list_records', 'List records from a table.'), gridtable],
    [tool('create_table', 'Create a new table in a base.'), gridtable],
  ]);

  it('ranks the tool whose whole name and word pairs the query repeats first', () => {
    expect(index.search('list all tables in a Gridtable base', 4)[0]?.name).toBe('list_tables');
  });
});

describe('the tool name asked for in other words', () => {
  it('ranks a tool whose every name word the query asks for, by synonyms too, above tools that only share a word', () => {
    const index = ToolIndex.build([
      tool('create_directory', 'Create a directory or ensure it exists; nested directories are created too.'),
      tool('new_folder_watch', 'Watch a folder for new files and report each new file.'),
      tool('export_logs', 'Export logs into a folder.'),
    ]);
    expect(index.search('make a new folder', 3)[0]?.name).toBe('create_directory');
  });
});

describe('providers', () => {
  const postgres = { name: 'postgres', title: 'PostgreSQL' };
  const mongo = { name: 'mongodb', title: 'MongoDB' };

  it("finds a tool by its provider's name and title, which its own text never says", () => {
    const index = withProviders([
      [tool('query', 'Run a read-only SQL query.'), postgres],
      [tool('find', 'Run a find query against a collection, filtered and sorted.'), mongo],
      [tool('aggregate', 'Run an aggregation query against a collection.'), mongo],
    ]);
    expect(index.search('run a query on postgres', 3)[0]?.name).toBe('query');
    expect(index.search('run a query in Mongo', 3)[0]?.provider).toBe('mongodb');
    expect(index.search('PostgreSQL', 3)[0]?.name).toBe('query');
  });

  it('boosts a provider only when the query names it as a name, not when it uses the word in passing', () => {
    const index = withProviders([
      [tool('reset', 'Reset the demo state.'), { name: 'everything', title: 'Everything' }],
      [tool('delete_entities', 'Delete entities from the graph.'), { name: 'memory', title: 'Memory' }],
    ]);
    expect(index.search('delete everything about Bob', 2)[0]?.name).toBe('delete_entities');
    expect(index.search('delete in everything', 2)[0]?.name).toBe('reset');
  });

  it('boosts a provider only for the words of its name the rest of the catalog rarely says', () => {
    const web = Array.from({ length: 60 }, (_, i): [Tool, ProviderLabel] => [
      tool(`page_${i}`, `Open web page ${i}.`),
      { name: `site${i}`, title: `Site ${i}` },
    ]);
    const index = withProviders([
      ...web,
      [tool('fetch_page', 'Fetch a page as markdown.'), { name: 'tavily', title: 'Tavily Web' }],
      [tool('get_page', 'Fetch a page as markdown.'), { name: 'scraper', title: 'Scraper' }],
    ]);
    // "Web" is said by 60 tools of other providers: it does not name "Tavily Web" (no doubled score), "Tavily" does.
    const [first, second] = index.search('fetch a Web page as markdown', 2);
    expect(first!.score / second!.score).toBeLessThan(1.5);
    const [named, other] = index.search('fetch a page as markdown with Tavily', 2);
    expect(named!.name).toBe('fetch_page');
    expect(named!.score / other!.score).toBeGreaterThan(1.5);
  });

  it('gives the provider bonus to the provider the query names most specifically, not to one named in part', () => {
    const crm = Array.from({ length: 8 }, (_, i): [Tool, ProviderLabel] => [
      tool(`crm_record_${i}`, `Update CRM record ${i}.`),
      { name: `crm${i}`, title: `CRM ${i}` },
    ]);
    const index = withProviders([
      ...crm,
      [
        tool('browser_take_screenshot', 'Take a screenshot of the current page, for browser automation.'),
        { name: 'acme', title: 'Acme browser' },
      ],
      [
        tool('acme_screenshot', 'Take a screenshot of the current page.'),
        { name: 'acme-automation', title: 'Acme automation' },
      ],
    ]);
    expect(index.search('take a screenshot with Acme automation', 2)[0]?.name).toBe('acme_screenshot');
    expect(index.search('take a screenshot in the Acme browser', 2)[0]?.name).toBe('browser_take_screenshot');
  });

  it('takes the provider from the caller only, never from a field the upstream sets', () => {
    const index = ToolIndex.build([{ ...tool('drop_all', 'Drop every table.'), provider: 'postgres' }]);
    expect(index.search('postgres', 3)).toEqual([]);
  });
});

describe('namedWords', () => {
  it('reads capitalised words past the first, mixed case and words after a naming preposition as names', () => {
    expect([...namedWords('forget everything you know about Bob', 200)]).toEqual(['bob']);
    expect(namedWords('GitHub issues', 200).has('github')).toBe(true);
    expect(namedWords('Everything you have', 200).has('everyth')).toBe(false);
    expect(namedWords('post it in slack', 200).has('slack')).toBe(true);
    expect(namedWords('the LINE account', 200).has(stem('line'))).toBe(true);
  });
});

describe('near-duplicates across providers', () => {
  const github = { name: 'github', title: 'GitHub' };
  const mirror = { name: 'github-mirror', title: 'GitHub mirror' };
  const gitlab = { name: 'gitlab', title: 'GitLab' };
  const index = withProviders([
    [tool('create_issue', 'Create a new issue in a github repository.'), github],
    [tool('github-mirror__create_issue', 'Create a new issue in a github mirror repository.'), mirror],
    [tool('gitlab__create_issue', 'Create a new issue in a GitLab project.'), gitlab],
    [tool('list_issues', 'List issues in a github repository.'), github],
  ]);

  it('folds the same tool from several providers into one hit that names the others', () => {
    const hits = index.search('create an issue', 5);
    const copies = hits.filter((h) => h.name === 'create_issue' || h.name === 'github-mirror__create_issue');
    expect(copies).toHaveLength(1);
    expect(copies[0]!.alsoFrom).toEqual([
      {
        name: copies[0]!.name === 'create_issue' ? 'github-mirror__create_issue' : 'create_issue',
        provider: expect.any(String),
      },
    ]);
    // A different service's tool of the same name is its own hit.
    expect(hits.map((h) => h.name)).toContain('gitlab__create_issue');
    expect(hits).toHaveLength(3);
  });

  it('still returns `limit` distinct tools when copies fill the ranking', () => {
    expect(index.search('issue', 2).map((h) => h.alsoFrom.length + 1)).toHaveLength(2);
  });
});

describe('concept weights by rarity', () => {
  const fillers = Array.from({ length: 20 }, (_, i) => tool(`report_${i}`, 'Export a report.'));
  const index = ToolIndex.build([...fillers, tool('payroll_run', 'Run payroll for a month.')]);

  it("weighs a rare word's concept above a common one's in a tool's coverage", () => {
    const hits = index.search('export the payroll report', 25);
    const payroll = hits.find((h) => h.name === 'payroll_run')!;
    const report = hits.find((h) => h.name === 'report_0')!;
    // Counted alike, payroll would answer 1/3 of the query and a report tool 2/3; by rarity the rare word weighs more.
    expect(payroll.coverage).toBeGreaterThan(1 / 3);
    expect(report.coverage).toBeLessThan(2 / 3);
  });
});

describe("the action's direction", () => {
  const index = ToolIndex.build([
    tool('gh_create_review', 'Create a review on a pull request.'),
    tool('gh_get_reviews', 'Get the reviews on a pull request.'),
    tool('db_create_collection', 'Create a collection in a database.'),
    tool('db_list_collections', 'List the collections of a database.'),
    tool('db_collection_schema', 'The schema of one collection in a database, sampled.'),
  ]);

  it('reads a question about state ("has anyone…") as a request to read: a getting tool above a creating one', () => {
    expect(index.search('has anyone reviewed my pull request', 2)[0]?.name).toBe('gh_get_reviews');
    // A request to act keeps its direction (equal scores, first by name).
    expect(index.search('review my pull request', 2)[0]?.name).toBe('gh_create_review');
  });

  it('reads "what … are in …" as asking for a listing: a listing tool first', () => {
    expect(index.search('what collections are in this database', 3)[0]?.name).toBe('db_list_collections');
  });

  it('puts reading tools back for a request to act that asks for no reading, not for a question or a "show"', () => {
    const notes = ToolIndex.build([
      tool('notes_get_note', 'Get a note from a notebook.'),
      tool('notes_pin_note', 'Pin a note in a notebook.'),
    ]);
    expect(notes.search('the grocery note in my notebook', 2)[0]?.name).toBe('notes_pin_note');
    expect(notes.search('what is in the grocery note?', 2)[0]?.name).toBe('notes_get_note');
    expect(notes.search('show the grocery note in my notebook', 2)[0]?.name).toBe('notes_get_note');
  });

  it('offers a tool that deletes only to a query that asks to remove something', () => {
    const bucket = ToolIndex.build([
      tool('bucket_delete_object', 'Delete an object from a storage bucket.'),
      tool('bucket_put_object', 'Upload an object to a storage bucket, with its content type and cache headers.'),
    ]);
    expect(bucket.search('the logo object in our storage bucket', 2)[0]?.name).toBe('bucket_put_object');
    expect(bucket.search('get rid of the logo object in our storage bucket', 2)[0]?.name).toBe('bucket_delete_object');
  });

  it('passes over a service prefix and finds the action of a name', () => {
    expect(nameAction(['slack', 'get', 'user'])).toBe('get');
    expect(nameAction([stem('create'), 'list'])).toBe(stem('create'));
    expect(nameAction(['collect', 'storag', 'size'])).toBeNull();
  });
});

describe('a pasted id read by its shape', () => {
  it("finds the user tool for a Slack user id instead of splitting it into words no tool has ('024', '7lh')", () => {
    const index = ToolIndex.build([
      {
        ...tool('chat_get_user_profile', 'Get detailed profile information for a specific person.'),
        inputSchema: { type: 'object', properties: { user_id: { type: 'string', description: 'The ID of the user' } } },
      },
      tool('chat_post_message', 'Post a message to a channel.'),
    ]);
    expect(index.search('who is U024BE7LH', 2)[0]?.name).toBe('chat_get_user_profile');
  });
});

describe('readIntent', () => {
  it('tells a question about state or a listing from a request, a polite request or a how-to', () => {
    expect(readIntent('has anyone approved my PR', 200)).toBe('read');
    expect(readIntent('who is the owner of this repo', 200)).toBe('read');
    expect(readIntent('any chargebacks this month?', 200)).toBe('read');
    expect(readIntent('which pods are crashing', 200)).toBe('list');
    expect(readIntent('what collections are in this database', 200)).toBe('list');
    expect(readIntent('create an issue for the login bug', 200)).toBe('none');
    expect(readIntent('can you create an issue?', 200)).toBe('none');
    expect(readIntent('how do I create a branch', 200)).toBe('none');
  });
});

describe('long descriptions', () => {
  // Forty-odd words of preamble, as long descriptions open with guardrails and usage notes.
  const preamble = Array.from({ length: 42 }, (_, i) => `note${i}`).join(' ');
  const index = ToolIndex.build([
    tool('ledger_close_period', 'Close an accounting period so no entry can change.'),
    tool(
      'ledger_assistant',
      `${preamble}. It explains a period close, sends a report to the auditor and keeps the audit trail.`,
    ),
  ]);

  it('gives no coverage credit for what a long description says only past its opening', () => {
    expect(index.search('close the period and send the report to the auditor', 2)[0]?.name).toBe('ledger_close_period');
  });

  it('still finds a tool by words deep in its description when nothing else says them', () => {
    expect(index.search('audit trail', 2)[0]?.name).toBe('ledger_assistant');
  });
});

describe('weak terms found only in a description', () => {
  it('give no coverage: a description naming several synonyms of one query word does not answer it', () => {
    const index = ToolIndex.build([
      tool('mail_send', 'Deliver a message: supply a record, notify a subscriber, register the text.'),
      tool('vault_records', 'Keep records.'),
      ...Array.from({ length: 6 }, (_, i) => tool(`report_${i}`, `Export report ${i} as a file.`)),
    ]);
    // "add" reaches deliver, supply, notify and register only as weak synonyms, all in mail_send's description.
    expect(index.search('add a text record to the vault', 2)[0]?.name).toBe('vault_records');
  });
});
