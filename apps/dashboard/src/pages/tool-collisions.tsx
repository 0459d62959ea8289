import { CollisionTable } from '../components/collision-table.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { Layout } from '../components/layout.js';
import type { ToolCollisionsReport } from '../types.js';
import { useResource } from '../use-resource.js';

/** Tool names offered by more than one provider, and the name each one is exposed under (GET /mcp/tool-collisions). */
export function ToolCollisionsPage() {
  const report = useResource<ToolCollisionsReport>('/mcp/tool-collisions');
  return (
    <Layout title="Tool collisions">
      <p className="hint">
        When providers offer the same tool name, the first to offer it keeps the bare name and the others are exposed as{' '}
        <code>&lt;provider&gt;__&lt;tool&gt;</code> (or their own prefix). Names are chosen once and kept.
      </p>
      {report.loading && !report.data ? <Loading what="tool collisions" /> : null}
      <ErrorNotice error={report.error} title="Could not load the tool collisions" />
      {report.data?.data.length === 0 ? <Empty>No tool name is offered by more than one provider.</Empty> : null}
      {report.data && report.data.data.length > 0 ? <CollisionTable collisions={report.data.data} /> : null}
      {report.data && report.data.listedPerUser.length > 0 ? (
        <p className="hint">
          Not asked (they list their tools to each user with the user&apos;s own credential):{' '}
          {report.data.listedPerUser.map((p) => p.providerName).join(', ')}.
        </p>
      ) : null}
    </Layout>
  );
}
