import type { ToolCollision } from '../types.js';

/**
 * The tool-collisions report as one table per upstream tool name: which provider offers it and
 * the exposed name that reaches it there (the bare name is the one that had it first).
 */
export function CollisionTable({ collisions }: { collisions: readonly ToolCollision[] }) {
  const groups = new Map<string, ToolCollision[]>();
  for (const c of collisions) groups.set(c.toolName, [...(groups.get(c.toolName) ?? []), c]);
  return (
    <ul className="cards collision-cards">
      {[...groups].map(([toolName, offers]) => (
        <li key={toolName} className="card">
          <h3>
            <code>{toolName}</code> <span className="hint">offered by {offers.length} providers</span>
          </h3>
          <table>
            <caption className="sr-only">Providers offering {toolName}</caption>
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">Exposed as</th>
              </tr>
            </thead>
            <tbody>
              {offers.map((o) => (
                <tr key={o.providerId}>
                  <td data-label="Provider">{o.providerName}</td>
                  <td data-label="Exposed as">
                    <code>{o.exposedName}</code>
                    {o.exposedName === toolName ? <span className="hint"> (the bare name)</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </li>
      ))}
    </ul>
  );
}
