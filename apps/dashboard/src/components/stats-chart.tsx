import { AUDIT_STATUSES, type AuditStats } from '../types.js';

const COLORS: Record<string, string> = {
  pending: '#8a6d00',
  confirmed: '#1d5fa8',
  rejected: '#a3302a',
  completed: '#1f7a3a',
  failed: '#6b2c8f',
};

/** The audit statistics as a bar chart (hand-written SVG), with the numbers also as text. */
export function StatsChart({ stats }: { stats: AuditStats }) {
  const bars = AUDIT_STATUSES.map((s) => ({ status: s, count: stats.byStatus[s] ?? 0 }));
  const max = Math.max(1, ...bars.map((b) => b.count));
  const width = 360;
  const rowHeight = 30;
  const labelWidth = 90;
  const numberWidth = 50;
  const plot = width - labelWidth - numberWidth;
  const summary = bars.map((b) => `${b.status} ${b.count}`).join(', ');

  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${width} ${bars.length * rowHeight}`}
        role="img"
        aria-label={`Audit entries by status: ${summary}`}
      >
        {bars.map((b, i) => {
          const w = b.count === 0 ? 0 : Math.max(2, Math.round((b.count / max) * plot));
          const y = i * rowHeight;
          return (
            <g key={b.status}>
              <text x={labelWidth - 8} y={y + 19} textAnchor="end" fontSize="13" fill="#222">
                {b.status}
              </text>
              <rect x={labelWidth} y={y + 6} width={plot} height={18} fill="#eef0f3" />
              <rect x={labelWidth} y={y + 6} width={w} height={18} fill={COLORS[b.status] ?? '#555'} />
              <text x={labelWidth + plot + 6} y={y + 19} fontSize="13" fill="#222">
                {b.count}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>
        {stats.total} {stats.total === 1 ? 'call' : 'calls'} in total; average duration{' '}
        {stats.avgDuration === null || stats.avgDuration === undefined ? '—' : `${Math.round(stats.avgDuration)} ms`}.
      </figcaption>
    </figure>
  );
}
