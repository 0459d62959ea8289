import { describe, expect, it } from 'vitest';
import { queryEntities } from './query-entities.js';
import { ToolIndex } from './tool-index.js';

describe('queryEntities', () => {
  it('reads pasted values by their shape and takes them out of the query', () => {
    const found = queryEntities('link PAY-9 to PAY-3 and mail jo.k@acme.io about #ops at 4pm, see https://x.io/a?b=1 for v2.3.0, $25');
    expect(found.words.sort()).toEqual(['channel', 'email address', 'issue', 'issue', 'link url', 'price amount', 'time', 'version release'].sort());
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
    expect(queryEntities('add a CNAME so docs.example.com goes to the new site').words).toEqual(['domain hostname dns']);
    expect(queryEntities('point api.acme.io at 52.14.9.201')).toEqual({ rest: 'point   at  ', words: ['domain hostname dns', 'ip address'] });
    expect(queryEntities('commit CHANGELOG.md and report.pdf').words).toEqual(['file', 'file']);
    expect(queryEntities('ship v2.3.0').words).toEqual(['version release']);
    // Abbreviations and sentence ends are no host names.
    expect(queryEntities('restart it, i.e. bounce it. then stop').words).toEqual([]);
  });

  it('costs linear time on hostile input (bounded repetitions)', () => {
    const started = performance.now();
    for (const filler of ['a', '1', 'A-', '#a', 'a.', 'http://', 'a.com.', '1.', 'a-b.']) queryEntities(filler.repeat(1_000));
    expect(performance.now() - started).toBeLessThan(250);
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
  ]);

  it('finds the tool a value is for, not the words the value is made of', () => {
    expect(index.search('what is PAY-9 about', 2)[0]?.name).toBe('tracker_get_issue');
    expect(index.search('who is jo@acme.io', 2)[0]?.name).toBe('crm_find_contact');
    expect(index.search('tell #ops the invoice bug is fixed', 2)[0]?.name).toBe('chat_post_message');
    expect(index.search('add a CNAME so docs.example.com goes to the new site', 2)[0]?.name).toBe('dns_upsert_record');
  });
});
