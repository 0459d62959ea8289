import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { CollisionTable } from './collision-table.js';

describe('CollisionTable', () => {
  it('groups the report by upstream name: each provider with the name that reaches it, the bare one marked', () => {
    const html = renderToStaticMarkup(
      <CollisionTable
        collisions={[
          { toolName: 'search', exposedName: 'beta__search', providerId: 'b', providerName: 'beta' },
          { toolName: 'search', exposedName: 'search', providerId: 'a', providerName: 'alpha' },
          { toolName: 'delete_all', exposedName: 'x__delete_all', providerId: 'x', providerName: 'x-prov' },
          { toolName: 'delete_all', exposedName: 'delete_all', providerId: 'a', providerName: 'alpha' },
        ]}
      />,
    );
    expect(html.match(/<li class="card">/g)).toHaveLength(2);
    expect(html).toContain('<h3><code>search</code> <span class="hint">offered by 2 providers</span></h3>');
    expect(html).toContain(
      '<tr><td data-label="Provider">beta</td><td data-label="Exposed as"><code>beta__search</code></td></tr>',
    );
    expect(html).toContain(
      '<td data-label="Exposed as"><code>search</code><span class="hint"> (the bare name)</span></td>',
    );
    expect(html).toContain('<caption class="sr-only">Providers offering delete_all</caption>');
  });
});
