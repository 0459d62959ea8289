import { describe, expect, it } from 'vitest';
import { ToolIndexCache } from './index-cache.js';
import { stem, terms, wordPairs } from './terms.js';
import { FIELD_LIMITS, fieldsOf } from './tool-fields.js';
import { queryTerms } from './query-terms.js';
import { RANKING, SEARCH_LIMITS, ToolIndex } from './tool-index.js';

const tool = (name: string, description: string, properties: Record<string, unknown> = {}) => ({
  name,
  description,
  inputSchema: { type: 'object', properties },
});

const TOOLS = [
  tool('github_create_issue', 'Open a new issue in a GitHub repository.', {
    repo: { type: 'string', description: 'owner/name' },
    title: { type: 'string' },
    body: { type: 'string' },
  }),
  tool('github_list_pull_requests', 'List pull requests of a repository, optionally filtered by state.', {
    state: { type: 'string', enum: ['open', 'closed', 'merged'] },
  }),
  tool('slack_send_message', 'Post a message to a Slack channel or a direct conversation.', {
    channel: { type: 'string' },
    text: { type: 'string' },
  }),
  tool('calendar_create_event', 'Schedule a meeting on a calendar and invite attendees.', {
    attendees: { type: 'array', items: { type: 'object', properties: { email: { type: 'string' } } } },
  }),
  tool('drive_delete_file', 'Move a file in the drive to the trash.', { fileId: { type: 'string' } }),
  tool('weatherForecast', 'Daily forecast for a city: temperature, rain and wind.', { city: { type: 'string' } }),
];

describe('terms', () => {
  it('splits snake, kebab and camel case and acronyms, drops stop words, stems plurals and verb endings', () => {
    expect(terms('getHTTPStatus github_list-pullRequests', 100)).toEqual([
      'get',
      'http',
      'status',
      'github',
      'list',
      'pull',
      'request',
    ]);
    expect(terms('please delete the issues', 100)).toEqual(['delet', 'issu']);
    expect(['issue', 'issues', 'issuing', 'issued'].map(stem)).toEqual(['issu', 'issu', 'issu', 'issu']);
    expect(['stopped', 'stop', 'entries', 'entry', 'copied'].map(stem)).toEqual([
      'stop',
      'stop',
      'entry',
      'entry',
      'copy',
    ]);
    // -ment nouns meet their verb; short stems ("document", "payment", "comment") are left alone.
    expect(['attachment', 'attachments', 'attached', 'attach'].map(stem)).toEqual([
      'attach',
      'attach',
      'attach',
      'attach',
    ]);
    expect(['deployments', 'deployed'].map(stem)).toEqual(['deploy', 'deploy']);
    expect(['document', 'payment', 'comment'].map(stem)).toEqual(['document', 'payment', 'comment']);
  });

  it('keeps short letter-digit codes whole ("s3", "k8s") and splits longer runs at letter/digit boundaries', () => {
    expect(terms('aws_list_s3_buckets k8s_get_pod EC2 route53 sha256sum', 200)).toEqual([
      'aws',
      'list',
      's3',
      'bucket',
      'k8s',
      'get',
      'pod',
      'ec2',
      'rout',
      '53',
      'sha',
      '256',
      'sum',
    ]);
  });

  it('pairs adjacent words and a verb with a particle up to three words later, as WordNet spells two-word verbs', () => {
    expect(wordPairs(['call', 'off', 'the', 'meeting'])).toEqual(['call_off', 'off_the', 'the_meeting']);
    expect(wordPairs(['turn', 'the', 'alerts', 'off'])).toContain('turn_off');
    expect(wordPairs(['turn', 'all', 'the', 'alerts', 'off'])).toContain('turn_off');
    expect(wordPairs(['turn', 'all', 'the', 'red', 'alerts', 'off'])).not.toContain('turn_off');
    expect(wordPairs(['turn', 'the', 'alerts', 'loud'])).not.toContain('turn_loud');
    expect(wordPairs(['x'])).toEqual([]);
  });

  it('reads at most maxChars of its input', () => {
    expect(terms(`${'word '.repeat(10)}tail`, 20)).not.toContain('tail');
  });
});

describe('ToolIndex', () => {
  const index = ToolIndex.build(TOOLS);

  it('ranks the tool whose name and description carry the query first', () => {
    expect(index.search('open a bug in the repo', 3)[0]?.name).toBe('github_create_issue');
    expect(index.search('remove a document from my drive', 3)[0]?.name).toBe('drive_delete_file');
    expect(index.search('post to a slack channel', 3)[0]?.name).toBe('slack_send_message');
    expect(index.search('will it rain in Paris tomorrow', 3)[0]?.name).toBe('weatherForecast');
    expect(index.search('book a meeting with Ana', 3)[0]?.name).toBe('calendar_create_event');
  });

  it('finds a tool by its schema: property names, descriptions, enum values and nested items', () => {
    expect(index.search('merged', 5).map((h) => h.name)).toEqual(['github_list_pull_requests']);
    expect(index.search('attendees email', 5)[0]?.name).toBe('calendar_create_event');
  });

  it('returns only matching tools, never more than the limit, nothing for an empty or stop-word-only query', () => {
    expect(index.search('slack', 10).map((h) => h.name)).toEqual(['slack_send_message']);
    expect(index.search('issue pull message file forecast event', 2)).toHaveLength(2);
    expect(index.search('', 5)).toEqual([]);
    expect(index.search('the of and', 5)).toEqual([]);
    expect(index.search('slack', 0)).toEqual([]);
    expect(index.search('slack', Number.NaN)).toEqual([]);
  });

  it('caps the limit at SEARCH_LIMITS.results', () => {
    const many = ToolIndex.build(Array.from({ length: 80 }, (_, i) => tool(`report_${i}`, 'Build a report')));
    expect(many.search('report', 1_000)).toHaveLength(SEARCH_LIMITS.results);
  });

  it('is deterministic: equal scores are ordered by name, whatever the input order', () => {
    const twins = [tool('b_ping', 'Ping a host'), tool('a_ping', 'Ping a host'), tool('c_ping', 'Ping a host')];
    const forward = ToolIndex.build(twins).search('ping', 5);
    const backward = ToolIndex.build([...twins].reverse()).search('ping', 5);
    expect(forward.map((h) => h.name)).toEqual(['a_ping', 'b_ping', 'c_ping']);
    expect(backward).toEqual(forward);
  });

  it('treats regex and JSON syntax in a query as plain text', () => {
    expect(index.search('.* (a+)+$ [slack] \\d{1000}', 5).map((h) => h.name)).toEqual(['slack_send_message']);
    expect(index.search('{"$where": "1"} __proto__ constructor', 5)).toEqual([]);
  });

  it('truncates a huge query: only its first SEARCH_LIMITS.queryChars characters are read', () => {
    const padding = 'zz '.repeat(SEARCH_LIMITS.queryChars);
    expect(index.search(`${padding}slack`, 5)).toEqual([]);
    expect(index.search(`slack ${'x'.repeat(5_000_000)}`, 5).map((h) => h.name)).toEqual(['slack_send_message']);
  });

  it('skips tools without a string name and repeats of a name', () => {
    const odd = ToolIndex.build([
      { description: 'no name' },
      { name: 42, description: 'number' },
      tool('dup', 'first copy'),
      tool('dup', 'second copy'),
    ]);
    expect(odd.size).toBe(1);
    expect(odd.search('copy', 5).map((h) => h.tool.description)).toEqual(['first copy']);
  });
});

describe('fieldsOf', () => {
  it('bounds what a hostile schema contributes (properties, depth, text)', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 10_000 }, (_, i) => [`p${i}`, { description: 'x'.repeat(1_000) }]),
    );
    const fields = fieldsOf({ name: 't', description: 'd'.repeat(100_000), inputSchema: { properties } })!;
    expect(fields.description).toHaveLength(FIELD_LIMITS.textChars);
    expect(fields.parameters.length).toBeLessThanOrEqual(FIELD_LIMITS.textChars + FIELD_LIMITS.schemaProperties);
    let deep: Record<string, unknown> = { properties: { bottom: {} } };
    for (let i = 0; i < 50; i++) deep = { properties: { [`level${i}`]: deep } };
    expect(fieldsOf({ name: 't', inputSchema: deep })!.parameters.split(' ')).toHaveLength(FIELD_LIMITS.schemaDepth);
  });

  it('takes the title from annotations when there is no top-level one', () => {
    expect(fieldsOf({ name: 't', annotations: { title: 'Pretty' } })!.title).toBe('Pretty');
    expect(fieldsOf({ name: 't', title: 'Own', annotations: { title: 'Pretty' } })!.title).toBe('Own');
  });
});

describe('ToolIndexCache', () => {
  it('builds once per key and evicts the least recently used past its bound', () => {
    const cache = new ToolIndexCache(2);
    let builds = 0;
    const tools = () => {
      builds += 1;
      return TOOLS;
    };
    const a = cache.get('a', tools);
    expect(cache.get('a', tools)).toBe(a);
    cache.get('b', tools);
    cache.get('a', tools); // a is now the most recent
    cache.get('c', tools); // evicts b
    expect(cache.size).toBe(2);
    expect(builds).toBe(3);
    expect(cache.get('a', tools)).toBe(a);
    cache.get('b', tools);
    expect(builds).toBe(4);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new ToolIndexCache(0)).toThrow(RangeError);
  });
});

describe('ToolIndex concept coverage', () => {
  const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object' } });
  // "invoice" and "customer" are common here (low idf), "archive" rare (high idf).
  const fillers = Array.from({ length: 12 }, (_, i) =>
    tool(`billing_tool_${i}`, ['Works on an invoice.', 'Works on a customer.', 'Works on a report.'][i % 3]!),
  );
  const index = ToolIndex.build([
    ...fillers,
    tool('mail_archive', 'Archive mail.'),
    tool('billing_email_customer_invoice', 'Email an invoice to its customer.'),
  ]);

  it('ranks a tool matching more of the query words above one matching a single rare word', () => {
    expect(index.search('archive the invoice for the customer', 2)[0]?.name).toBe('billing_email_customer_invoice');
  });

  it("credits a concept matched only through a weaker term (a thesaurus synonym) in proportion to that term's weight", () => {
    const twins = ToolIndex.build([tool('alpha_repo', 'Repo things.'), tool('alpha_repository', 'Repository things.')]);
    const hits = twins.search('repository', 2);
    expect(hits.map((h) => h.name)).toEqual(['alpha_repository', 'alpha_repo']);
    const share = RANKING.relatedWeight / RANKING.vocabularyWeight;
    // Same BM25F for both (mirror documents): the ratio is the synonym's weight times its coverage credit.
    expect(hits[1]!.score / hits[0]!.score).toBeCloseTo((RANKING.relatedWeight * (1 + share)) / 2, 6);
  });

  it("gives a synonym, a vocabulary phrase's tool word and a pasted value's kind the concept they came from", () => {
    const found = queryTerms('get rid of the invoice for PAY-9');
    const concept = (word: string) => found.get(terms(word, 100)[0]!)!.concepts;
    for (const word of ['get', 'invoice', 'bill', 'delete', 'issue']) expect(concept(word)).toBeGreaterThan(0);
    expect(concept('invoice')).not.toBe(concept('get'));
    expect(concept('bill')).toBe(concept('invoice')); // thesaurus: invoice ~ bill
    expect(concept('delete')).toBe(concept('get')); // vocabulary: "get rid of" → delete
    expect(concept('issue')).not.toBe(concept('invoice')); // "PAY-9" → issue, a concept of its own
    expect(found.get(terms('get', 100)[0]!)?.weight).toBe(RANKING.idiomWordWeight);
  });
});
