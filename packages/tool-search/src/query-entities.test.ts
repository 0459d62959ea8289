import { describe, expect, it } from 'vitest';
import { queryEntities } from './query-entities.js';
import { ToolIndex } from './tool-index.js';

describe('queryEntities', () => {
  it('reads pasted values by their shape and takes them out of the query', () => {
    const found = queryEntities(
      'link PAY-9 to PAY-3 and mail jo.k@acme.io about #ops at 4pm, see https://x.io/a?b=1 for v2.3.0, $25',
    );
    expect(found.words.sort()).toEqual(
      ['channel', 'email address', 'issue', 'issue', 'link url', 'price amount', 'time', 'version release'].sort(),
    );
    for (const gone of ['PAY', 'acme', 'ops', '4pm', 'x.io', '2.3.0', '$25']) expect(found.rest).not.toContain(gone);
    expect(found.rest).toContain('link');
  });

  it('tells an issue number (#12) from a channel (#eng) and leaves plain words and numbers alone', () => {
    expect(queryEntities('close #12').words).toEqual(['number']);
    expect(queryEntities('post in #eng-alerts').words).toEqual(['channel']);
    expect(queryEntities('order 1042 for Pay Co in 2024').words).toEqual([]);
    expect(queryEntities('order 1042 for Pay Co in 2024').rest).toBe('order 1042 for Pay Co in 2024');
  });

  it('reads file names, host names and IPv4 addresses; an IP is not a version, a file name not a host', () => {
    expect(queryEntities('add a CNAME so docs.example.com goes to the new site').words).toEqual([
      'domain hostname dns',
    ]);
    expect(queryEntities('point api.acme.io at 52.14.9.201')).toEqual({
      rest: 'point   at  ',
      words: ['domain hostname dns', 'ip address'],
    });
    expect(queryEntities('commit CHANGELOG.md and report.pdf').words).toEqual(['file', 'file']);
    expect(queryEntities('ship v2.3.0').words).toEqual(['version release']);
    // Abbreviations and sentence ends are no host names.
    expect(queryEntities('restart it, i.e. bounce it. then stop').words).toEqual([]);
  });

  it('reads container images, SQL statements, JSON payloads, owner/name repositories and AWS resource ids', () => {
    expect(queryEntities('deploy ghcr.io/acme/api:1.8.2 to api').words).toEqual(['image container']);
    expect(queryEntities('why is SELECT * FROM orders slow').words).toEqual(['sql query']);
    expect(queryEntities('send {"orderId": 991} to the queue').words).toEqual(['json payload']);
    expect(queryEntities('file it in acme/web#12')).toEqual({ rest: 'file it in   ', words: ['repository', 'number'] });
    expect(queryEntities('snapshot vol-0abc123 and stop i-0de12').words).toEqual(['volume', 'instance']);
  });

  it("reads Slack's user, channel and workspace ids and UUIDs as ids, not a promo code or a plain word", () => {
    expect(queryEntities('who is U024BE7LH in our workspace')).toEqual({
      rest: 'who is   in our workspace',
      words: ['user id'],
    });
    expect(queryEntities('post in C01ABCD2EF for W0123ABCD').words).toEqual(['user id', 'channel id']);
    expect(queryEntities('which team is T0ABC12345').words).toEqual(['workspace team id']);
    expect(queryEntities('open 3f2b9c1e-8a4d-4c2e-9b1a-0c7d5e6f8a9b').words).toEqual(['id']);
    expect(queryEntities('type WINTER2025 or SUMMER15 at checkout, then UPDATE').words).toEqual([]);
  });

  it('leaves times, search operators, paths and lower-case SQL words alone', () => {
    expect(queryEntities('the 1:1 at 10:30').words).toEqual([]);
    expect(queryEntities('from:ana newer_than:7d is:open').words).toEqual([]);
    expect(queryEntities('what is under logs/2024/ in the bucket').words).toEqual([]);
    expect(queryEntities('delete the rows from the list').words).toEqual([]);
  });

  // A catastrophically backtracking shape hangs on these inputs; the 30 s test timeout is a hang
  // bound, not a speed claim (speed is `pnpm bench`'s).
  it('reads hostile input without catastrophic backtracking (bounded repetitions)', { timeout: 30_000 }, () => {
    const wordCounts = Object.fromEntries(
      ['a', '1', 'A-', '#a', 'a.', 'http://', 'a.com.', '1.', 'a-b.', 'a:1.', 'a/', 'SELECT ', '{"', 'i-0'].map(
        (filler) => [filler, queryEntities(filler.repeat(1_000)).words.length],
      ),
    );
    expect(wordCounts).toEqual({
      a: 0,
      '1': 0,
      'A-': 0,
      '#a': 1,
      'a.': 0,
      'http://': 4,
      'a.com.': 0,
      '1.': 250,
      'a-b.': 0,
      'a:1.': 1,
      'a/': 0,
      'SELECT ': 0,
      '{"': 0,
      'i-0': 0,
    });
  });
});

describe('ToolIndex with pasted values', () => {
  const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object' } });
  const index = ToolIndex.build([
    tool('tracker_get_issue', 'Get an issue with its status.'),
    tool('billing_pay_invoice', 'Pay an open invoice.'),
    tool('chat_post_message', 'Post a message to a channel.'),
    tool('crm_find_contact', 'Find a contact by email address.'),
    tool('dns_upsert_record', 'Create or update a DNS record in a hosted zone.'),
    tool('docs_example_page', 'Show an example docs page.'),
    tool('k8s_set_image', 'Update the container image of a deployment.'),
    tool('k8s_get_deployment', 'Describe a deployment: image, replicas.'),
  ]);

  it('finds the tool a value is for, not the words the value is made of', () => {
    expect(index.search('what is PAY-9 about', 2)[0]?.name).toBe('tracker_get_issue');
    expect(index.search('who is jo@acme.io', 2)[0]?.name).toBe('crm_find_contact');
    expect(index.search('tell #ops the invoice bug is fixed', 2)[0]?.name).toBe('chat_post_message');
    expect(index.search('add a CNAME so docs.example.com goes to the new site', 2)[0]?.name).toBe('dns_upsert_record');
    expect(index.search('put ghcr.io/acme/api:1.8.2 on the api deployment', 2)[0]?.name).toBe('k8s_set_image');
  });
});
