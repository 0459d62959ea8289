import { describe, expect, it } from 'vitest';
import { allWords, stem, terms } from './terms.js';
import { ToolIndex } from './tool-index.js';
import { vocabularyMatch as matchWords } from './vocabulary-expansion.js';

const term = (word: string) => terms(word, 100)[0]!;
const vocabularyMatch = (query: string, maxChars: number) => matchWords(allWords(query, maxChars).map(stem));
const vocabularyTerms = (query: string, maxChars: number) => new Set(vocabularyMatch(query, maxChars).targets.keys());

describe('vocabularyTerms', () => {
  it("reads users' phrases as the tool words they stand for, multi-word phrases included", () => {
    const found = vocabularyTerms('spin up the staging boxes', 1_000);
    expect(found).toContain(term('start'));
    expect(found).toContain(term('instance'));
    expect(vocabularyTerms('bill the client for March', 1_000)).toContain(term('invoice'));
  });

  it('keeps stop words, so phrases made of them match ("who can see")', () => {
    expect(vocabularyTerms('who can see the budget file', 1_000)).toContain(term('permission'));
    expect(vocabularyTerms('see the budget', 1_000)).not.toContain(term('permission'));
  });

  it('lets a gap take up to four words and no more', () => {
    expect(vocabularyTerms('let the whole ops team know', 1_000)).toContain(term('send'));
    expect(vocabularyTerms('let the whole ops team of mine know', 1_000)).not.toContain(term('send'));
  });

  it('lets the particle of a two-word verb stand after its object ("pass this email along")', () => {
    expect(vocabularyTerms('pass along the invoice', 1_000)).toContain(term('forward'));
    expect(vocabularyTerms('pass this email along', 1_000)).toContain(term('forward'));
    expect(vocabularyTerms('pass the signed contract email along', 1_000)).toContain(term('forward'));
    expect(vocabularyTerms('pass the email', 1_000)).not.toContain(term('forward'));
  });

  it("names the words used up by a multi-word phrase, but not a phrase's own tool words nor single-word phrases", () => {
    const { targets, idiomWords } = vocabularyMatch('get rid of that email', 1_000);
    expect(targets.get(term('delete'))).toEqual(new Set([term('get')]));
    expect(idiomWords).toContain(term('get'));
    expect(idiomWords).toContain(term('rid'));
    expect(idiomWords).not.toContain(term('email'));
    expect(vocabularyMatch('trash that email', 1_000).idiomWords.size).toBe(0);
    // "give access" stands for share and access, so "access" stays the user's word; "give" does not.
    const giveAccess = vocabularyMatch('give access to the folder', 1_000);
    expect(giveAccess.idiomWords).toContain(term('give'));
    expect(giveAccess.idiomWords).not.toContain(term('access'));
  });

  it('does not read a word inside a multi-word phrase as a one-word phrase too ("away" of "throw away")', () => {
    expect(vocabularyTerms('throw away that email', 1_000)).toEqual(new Set([term('delete')]));
    expect(vocabularyTerms('set my status to away', 1_000)).toContain(term('status'));
  });

  it('matches whole words only and reads at most maxChars', () => {
    expect(vocabularyTerms('boxer billiards', 1_000).size).toBe(0);
    expect(vocabularyTerms(`${'zz '.repeat(100)} bill`, 100).size).toBe(0);
  });
});

describe('ToolIndex with the software-tools vocabulary', () => {
  const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object' } });
  const index = ToolIndex.build([
    tool('cloud_start_instances', 'Start stopped instances.'),
    tool('cloud_stop_instances', 'Stop running instances.'),
    tool('cloud_list_buckets', 'List storage buckets.'),
    tool('billing_create_invoice', 'Create a draft invoice for a customer.'),
    tool('billing_list_payments', 'List recent payments.'),
  ]);

  it("finds the tool for a user's everyday words", () => {
    expect(index.search('spin up the boxes', 3)[0]?.name).toBe('cloud_start_instances');
    expect(index.search('shut down the servers', 3)[0]?.name).toBe('cloud_stop_instances');
    expect(index.search('bill Acme for the March work', 3)[0]?.name).toBe('billing_create_invoice');
  });

  it('lets an idiom\'s generic words ("get" of "get rid of") count less than the tool word it stands for', () => {
    const mail = ToolIndex.build([
      tool('mail_get_message', 'Get one email message.'),
      tool('mail_delete_message', 'Delete an email message.'),
    ]);
    expect(mail.search('get rid of that message', 2).map((h) => h.name)).toEqual([
      'mail_delete_message',
      'mail_get_message',
    ]);
    expect(mail.search('get that message', 1)[0]?.name).toBe('mail_get_message');
  });

  it("weighs the vocabulary's words below the query's own", () => {
    const [own] = index.search('start instances', 1);
    const [viaVocabulary] = index.search('spin up boxes', 1);
    expect(viaVocabulary?.name).toBe(own?.name);
    expect(viaVocabulary!.score).toBeLessThan(own!.score);
  });
});
