import { isContentWord } from './terms.js';
import { isVerb } from './wordnet.js';

/**
 * Values a user pastes into a request have shapes that say what they are: "PAY-9" is an issue
 * key, "jo@acme.io" an email address, "#ops" a channel, "4pm" a time. Split into words they are
 * noise ("pay", "acme", "io"); read by shape they name the kind of thing the tool takes. Every
 * repetition is bounded, so a hostile 1,000-character query costs linear time.
 */
const SHAPES: readonly { pattern: RegExp; words: string; unless?: (value: string) => boolean }[] = [
  { pattern: /\bhttps?:\/\/[^\s]{1,2000}/giu, words: 'link url' },
  // A container image with a version tag, registry included ("ghcr.io/acme/api:1.8.2", "nginx:1.25", "api:latest"), before host
  // names and versions; a search operator ("from:ana", "newer_than:7d") has no dotted version.
  {
    pattern:
      /(?<![\p{L}\p{N}@/:.-])[a-z][a-z0-9._-]{0,127}(?:\/[a-z0-9][a-z0-9._-]{0,127}){0,4}:(?:\d[\p{L}\p{N}_-]{0,63}\.[\p{L}\p{N}._-]{0,63}|latest)(?![\p{L}\p{N}/])/gu,
    words: 'image container',
  },
  // A pasted SQL statement (keywords in capitals, as written in code): what it is, not its table's words only.
  { pattern: /\b(?:SELECT|INSERT|UPDATE|DELETE|WITH)\b[^;]{0,500}?\b(?:FROM|INTO|SET)\b/gu, words: 'sql query' },
  // A JSON object ("{"orderId": 991}"): a payload.
  { pattern: /\{\s{0,20}"[^{}]{0,500}\}/gu, words: 'json payload' },
  // An owner/name pair ("acme/api", "kubernetes/kubernetes"): a repository; a path (a/b/c) is not one, nor a
  // pair of everyday words ("read/write", "and/or", "copy/paste"), which stays words.
  {
    pattern: /(?<![\p{L}\p{N}@._/:-])[a-z][a-z0-9-]{1,38}\/[a-z0-9][a-z0-9._-]{1,99}(?![\p{L}\p{N}/])/gu,
    words: 'repository',
    unless: (pair) => pair.split('/').every((part) => !isContentWord(part) || isVerb(part)),
  },
  // AWS resource ids by their documented prefixes.
  { pattern: /\bvol-[0-9a-f]{3,17}\b/gu, words: 'volume' },
  { pattern: /\bsnap-[0-9a-f]{3,17}\b/gu, words: 'snapshot' },
  { pattern: /\bami-[0-9a-f]{3,17}\b/gu, words: 'image' },
  { pattern: /\bi-[0-9a-f]{3,17}\b/gu, words: 'instance' },
  // Slack's ids by their first letter (U/W a user, C/G a channel, T a workspace) and a digit next, as Slack writes them
  // ("U024BE7LH", "C01ABCD2EF"; not a code such as "WINTER2025"), and UUIDs: a value the tool looks up, not words ("024", "lh").
  { pattern: /\b[UW]\d[A-Z0-9]{7,9}\b/gu, words: 'user id' },
  { pattern: /\b[CG]\d[A-Z0-9]{7,9}\b/gu, words: 'channel id' },
  { pattern: /\bT\d[A-Z0-9]{7,9}\b/gu, words: 'workspace team id' },
  { pattern: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/giu, words: 'id' },
  { pattern: /[\p{L}\p{N}._%+-]{1,64}@[\p{L}\p{N}-]{1,63}(?:\.[\p{L}\p{N}-]{1,63}){1,8}/gu, words: 'email address' },
  {
    pattern:
      /[\p{L}\p{N}_-]{1,64}\.(?:pdf|docx?|xlsx?|csv|pptx?|txt|md|json|ya?ml|png|jpe?g|gif|svg|zip|log|sql|py|js|ts|go|rb|sh|html?)\b/giu,
    words: 'file',
  },
  {
    pattern:
      /(?<![\p{L}\p{N}@._/-])(?:[a-z0-9][a-z0-9-]{0,62}\.){1,8}(?:com|net|org|io|dev|app|ai|co|cloud|biz|info|tech|site|xyz|us|uk|de|fr|eu|ca|au|nl|es|it|jp|in)\b(?![.@/-]?[\p{L}\p{N}])/giu,
    words: 'domain hostname dns',
  },
  { pattern: /\b[A-Z][A-Z0-9]{1,9}-\d{1,9}\b/gu, words: 'issue' },
  { pattern: /(?<![\p{L}\p{N}])#\d{1,9}\b/gu, words: 'number' },
  { pattern: /(?<![\p{L}\p{N}])#\p{L}[\p{L}\p{N}_-]{0,80}/gu, words: 'channel' },
  { pattern: /\b\d{1,3}(?:\.\d{1,3}){3}\b/gu, words: 'ip address' },
  { pattern: /\bv?\d{1,4}\.\d{1,4}\.\d{1,4}\b/gu, words: 'version release' },
  { pattern: /\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b/giu, words: 'time' },
  { pattern: /[$€£]\s?\d{1,9}(?:[.,]\d{1,2})?/gu, words: 'price amount' },
];

/** A query with its shaped values taken out, and the words their shapes stand for. */
export interface QueryEntities {
  /** The query, each shaped value replaced by a space. */
  rest: string;
  /** The words the values' shapes stand for ("issue", "email address", …), one entry per value. */
  words: string[];
}

/** Finds the shaped values of a query (already bounded by the caller) and takes them out. */
export function queryEntities(query: string): QueryEntities {
  const words: string[] = [];
  let rest = query;
  for (const { pattern, words: said, unless } of SHAPES) {
    rest = rest.replace(pattern, (value) => {
      if (unless?.(value)) return value;
      words.push(said);
      return ' ';
    });
  }
  return { rest, words };
}
