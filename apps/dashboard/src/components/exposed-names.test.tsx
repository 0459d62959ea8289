import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ExposedToolsReport, ToolProvider } from '../types.js';
import { ExposedNames } from './exposed-names.js';

const provider = (overrides: Partial<ToolProvider> = {}) =>
  ({ id: 'p-beta', name: 'beta', namePrefix: null, ...overrides }) as ToolProvider;
const report: ExposedToolsReport = {
  data: [
    { providerId: 'p-alpha', providerName: 'alpha', toolName: 'search', exposedName: 'search' },
    { providerId: 'p-beta', providerName: 'beta', toolName: 'fetch', exposedName: 'fetch' },
    { providerId: 'p-beta', providerName: 'beta', toolName: 'search', exposedName: 'beta__search' },
  ],
  listedPerUser: [{ providerId: 'p-mine', providerName: 'mine' }],
};
const render = (p: ToolProvider, r: ExposedToolsReport | null = report) =>
  renderToStaticMarkup(<ExposedNames provider={p} report={r} />);

describe('ExposedNames', () => {
  it("lists the provider's own tools under the names clients call, with the upstream name where it differs", () => {
    const html = render(provider());
    expect(html).toContain('aria-label="Tools of beta as clients see them"');
    expect(html).toContain('<li><code>fetch</code></li>');
    expect(html).toMatch(/<code>beta__search<\/code><span class="hint"> → upstream <code>search<\/code><\/span>/);
    expect(html).not.toContain('&lt;tool&gt;');
    expect(html.match(/<li>/g)).toHaveLength(2);
  });

  it('says when the upstream lists nothing now, and while the report loads', () => {
    expect(render(provider({ id: 'p-gone', name: 'gone' }))).toContain('none listed now');
    expect(render(provider(), null)).toContain('loading…');
  });

  it('a provider that lists per user shows the naming rule, its prefix when it has one', () => {
    expect(render(provider({ id: 'p-mine', name: 'mine' }))).toContain('named when each user lists them');
    expect(render(provider({ id: 'p-mine', name: 'mine', namePrefix: 'gh' }))).toContain('gh__&lt;tool&gt;');
  });
});
