import { describe, expect, it } from 'vitest';
import { exposedTool, visibleSetKey } from './visible-set-key.js';

// The search index's cache key: cheap per request, and different whenever the visible set is.
const upstreamList = (description = 'Open an issue'): Record<string, unknown>[] => [
  { name: 'create_issue', description, inputSchema: { type: 'object', properties: { title: { type: 'string' } } } },
  { name: 'list_issues', description: 'List issues', inputSchema: { type: 'object' } },
];
const exposed = (list: Record<string, unknown>[], prefix = '') =>
  list.map((tool) => exposedTool(tool, `${prefix}${String(tool.name)}`));

describe('visibleSetKey', () => {
  it('is the same for fresh copies of the same provider-list objects (each request copies them)', () => {
    const list = upstreamList();
    expect(visibleSetKey(exposed(list))).toBe(visibleSetKey(exposed(list)));
  });

  it('changes when the list is fetched again, even with the same content (the objects are new)', () => {
    expect(visibleSetKey(exposed(upstreamList()))).not.toBe(visibleSetKey(exposed(upstreamList())));
  });

  it('changes when a tool is hidden, the order differs, or an exposed name differs', () => {
    const list = upstreamList();
    const key = visibleSetKey(exposed(list));
    expect(visibleSetKey(exposed(list.slice(1)))).not.toBe(key);
    expect(visibleSetKey(exposed([...list].reverse()))).not.toBe(key);
    expect(visibleSetKey(exposed(list, 'tracker_'))).not.toBe(key);
  });

  it('copies a tool under its exposed name once, without changing the provider-list object', () => {
    const [tool] = upstreamList();
    const copy = exposedTool(tool!, 'tracker_create_issue');
    expect(copy).toEqual({ ...tool, name: 'tracker_create_issue' });
    expect(exposedTool(tool!, 'tracker_create_issue')).toBe(copy);
    expect(exposedTool(tool!, 'create_issue')).not.toBe(copy);
    expect(tool!.name).toBe('create_issue');
  });

  it('keeps a bounded number of copies per tool, and a copy made again keys the same', () => {
    const [tool] = upstreamList();
    const key = visibleSetKey([exposedTool(tool!, 'n0')]);
    for (let i = 1; i <= 20; i++) exposedTool(tool!, `n${i}`);
    expect(visibleSetKey([exposedTool(tool!, 'n0')])).toBe(key);
  });

  it('keys tools not made by exposedTool by their definition', () => {
    expect(visibleSetKey(upstreamList())).toBe(visibleSetKey(upstreamList()));
    expect(visibleSetKey(upstreamList('Open a ticket'))).not.toBe(visibleSetKey(upstreamList()));
  });
});
