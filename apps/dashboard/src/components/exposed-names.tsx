import type { ExposedToolsReport, ToolProvider } from '../types.js';

/**
 * A provider card's "Tools exposed as": the names clients list and call on the unified endpoint
 * (GET /mcp/exposed-tools), each with the upstream name it reaches when they differ. A provider
 * that lists per user, or one not in the report (unreachable), says so instead.
 */
export function ExposedNames({ provider, report }: { provider: ToolProvider; report: ExposedToolsReport | null }) {
  if (report === null) return <span className="hint">loading…</span>;
  if (report.listedPerUser.some((p) => p.providerId === provider.id)) {
    return <span className="hint">named when each user lists them with their own credential ({ruleOf(provider)})</span>;
  }
  const tools = report.data.filter((t) => t.providerId === provider.id);
  if (tools.length === 0)
    return <span className="hint">none listed now (no tools, or the upstream did not answer)</span>;
  return (
    <ul className="exposed-names" aria-label={`Tools of ${provider.name} as clients see them`}>
      {tools.map((t) => (
        <li key={t.exposedName}>
          <code>{t.exposedName}</code>
          {t.exposedName !== t.toolName ? (
            <span className="hint">
              {' '}
              → upstream <code>{t.toolName}</code>
            </span>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

/** The naming rule, for providers whose names are not known until a user lists them. */
const ruleOf = (provider: ToolProvider): string =>
  provider.namePrefix ? `${provider.namePrefix}__<tool>` : '<tool>, or <provider>__<tool> when another had it first';
