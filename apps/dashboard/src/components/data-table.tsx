/** The table every list page shows: scrolling wrapper, a caption for screen readers, the header row. */
export function DataTable({
  caption,
  columns,
  children,
}: {
  caption: string;
  columns: string[];
  children: React.ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column}>
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
