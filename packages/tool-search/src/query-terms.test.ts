import { describe, expect, it } from 'vitest';
import { queryTerms } from './query-terms.js';
import { RANKING } from './ranking.js';
import { stem } from './terms.js';
import { relatedTerms } from './thesaurus.js';
import { ToolIndex } from './tool-index.js';

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object' } });
const weightOf = (query: string, word: string) => queryTerms(query).get(stem(word))?.weight;

describe('vocabulary tool words through the thesaurus', () => {
  it('puts trash and discard in the delete group', () => {
    expect(relatedTerms(stem('delete'))).toEqual(
      expect.arrayContaining([stem('trash'), stem('discard'), stem('remove')]),
    );
  });

  it("looks for a vocabulary tool word's related terms at vocabularyWeight × relatedWeight, under its phrase's concept", () => {
    const found = queryTerms('get rid of that email');
    expect(found.get(stem('delete'))?.weight).toBe(RANKING.vocabularyWeight);
    expect(found.get(stem('trash'))?.weight).toBeCloseTo(RANKING.vocabularyWeight * RANKING.relatedWeight, 10);
    expect(found.get(stem('trash'))?.concepts).toBe(found.get(stem('delete'))?.concepts);
    // Without the phrase, nothing asks for trash.
    expect(queryTerms('read that email').has(stem('trash'))).toBe(false);
  });

  it('finds a tool named with a synonym of the tool word an idiom stands for', () => {
    const index = ToolIndex.build([
      tool('mail_trash_email', 'Move an email to the trash.'),
      tool('mail_archive_email', 'Archive an email out of the inbox.'),
      tool('mail_block_sender', 'Block the sender of an email.'),
      tool('mail_star_email', 'Star an email.'),
    ]);
    expect(index.search('throw away that phishing email', 1)[0]?.name).toBe('mail_trash_email');
    expect(index.search('get rid of the email from the recruiter', 1)[0]?.name).toBe('mail_trash_email');
  });
});

describe('verb + particle compounds', () => {
  it('looks for the one-word forms of a verb and its particle, in both orders, at compoundWeight', () => {
    expect(weightOf('what meetings are coming up', 'upcoming')).toBe(RANKING.compoundWeight);
    expect(weightOf('back the orders database up tonight', 'backup')).toBe(RANKING.compoundWeight);
    expect(weightOf('set up a new channel', 'setup')).toBe(RANKING.compoundWeight);
  });

  it("gives a compound its verb's concept, and forms none without a particle or from two particles", () => {
    const found = queryTerms('what is coming up');
    expect(found.get(stem('upcoming'))?.concepts).toBe(found.get(stem('coming'))?.concepts);
    expect(queryTerms('what meetings are coming soon').has(stem('upcoming'))).toBe(false);
    expect(queryTerms('up on the roof').has('upon')).toBe(false);
  });

  it('ranks a tool named with the compound first', () => {
    const index = ToolIndex.build([
      tool('calendar_list_upcoming_events', 'List the next events from now on.'),
      tool('calendar_create_event', 'Create a calendar event.'),
      tool('lambda_invoke', 'Invoke a function.'),
    ]);
    expect(index.search('what meetings do I have coming up', 1)[0]?.name).toBe('calendar_list_upcoming_events');
  });
});

describe('product names', () => {
  it('relates a product to the names its users and tool authors give it', () => {
    expect(relatedTerms('kubernet')).toContain('k8s');
    expect(relatedTerms(stem('postgresql'))).toContain(stem('postgres'));
    expect(relatedTerms('crm')).toContain(stem('salesforce'));
  });

  it('finds a provider prefixed tool by the product name a user says', () => {
    const index = ToolIndex.build([
      tool('k8s_list_pods', 'List pods in a namespace.'),
      tool('docker_list_containers', 'List containers and pods of a host.'),
    ]);
    expect(index.search('which pods are running on kubernetes', 1)[0]?.name).toBe('k8s_list_pods');
  });
});
