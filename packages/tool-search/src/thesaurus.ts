import { stem } from './terms.js';

/**
 * Words a user and a tool author often pick differently for the same thing ("remove" a file the
 * tool calls "delete"). General software and office vocabulary, not any one catalog's: a query
 * term also looks for the other words of its groups, at a lower weight than the word itself.
 */
const GROUPS: readonly string[] = [
  'delete remove erase destroy drop purge trash discard',
  'create add new make insert',
  'list enumerate browse',
  'get fetch retrieve read show view lookup',
  'find search query lookup locate',
  'update edit modify change patch alter rename',
  'send post notify deliver',
  'start run launch trigger execute invoke',
  'stop cancel halt terminate abort kill',
  'restart reboot reload',
  'upload put attach',
  'download export save',
  'import load ingest',
  'close resolve finish complete',
  'merge combine',
  'approve accept',
  'reject decline deny',
  'assign delegate',
  'schedule book plan',
  'meeting event appointment',
  'email mail',
  'message chat dm',
  'channel room',
  'file document doc',
  'folder directory dir',
  'repository repo',
  'issue ticket bug',
  'comment reply note',
  'user person member people account',
  'team group',
  'customer client',
  'invoice bill',
  'payment charge',
  'refund reimburse',
  'subscription plan',
  'price cost',
  'database db',
  'table sheet spreadsheet',
  'row record entry',
  'image picture photo',
  'video clip',
  'error exception failure crash',
  'log logs',
  'metric metrics measurement stat statistics',
  'alert alarm incident',
  'deploy deployment release rollout ship',
  'server host machine instance vm',
  'container pod',
  'secret credential password token',
  'permission access role',
  'share grant',
  'free available',
  'address location place',
  'weather forecast',
  'translate translation',
  'summarize summary',
  'calendar agenda',
  'contact lead',
  'task todo',
  'order purchase',
  'product item sku',
  'stock inventory',
  'shipment delivery parcel package',
  'branch ref',
  'commit revision',
  'pr pull',
  'link url',
  'backup snapshot',
  'config configuration setting settings',
  'dns domain',
  'cert certificate tls ssl',
  'queue topic',
  'cheap inexpensive',
  'today now current',
  // Products and the names their users and tool authors use for them.
  'k8s kubernetes kube kubectl',
  'postgres postgresql psql pg',
  'aws amazon',
  'salesforce sfdc crm',
  'gmail mail',
];

/** Each stemmed term's related stemmed terms (itself excluded), built once. */
const RELATED: ReadonlyMap<string, readonly string[]> = buildRelated(GROUPS);

function buildRelated(groups: readonly string[]): Map<string, string[]> {
  const related = new Map<string, Set<string>>();
  for (const group of groups) {
    const stems = [...new Set(group.split(' ').map(stem))];
    for (const term of stems) {
      const set = related.get(term) ?? new Set<string>();
      for (const other of stems) if (other !== term) set.add(other);
      related.set(term, set);
    }
  }
  return new Map([...related].map(([term, set]) => [term, [...set].sort()]));
}

/** The terms related to a (stemmed) query term; empty when it has none. */
export const relatedTerms = (term: string): readonly string[] => RELATED.get(term) ?? NONE;

const NONE: readonly string[] = Object.freeze([]);
