/** A tool as the benchmark's providers list it (MCP `tools/list` item); a type, not an interface, so it is a plain record to the index. */
export type CatalogTool = {
  name: string;
  description: string;
  inputSchema: {
    type: 'object';
    properties: Record<string, Record<string, unknown>>;
    required: string[];
    additionalProperties: false;
  };
};

/**
 * One tool written compactly: name, description, then one parameter per string,
 * `name[*]:type:description` (`*` required; type `string`, `integer`, `number`, `boolean`,
 * `string[]`, `object`, or `a|b|c` for a string enum).
 */
export type ToolLine = readonly [name: string, description: string, ...params: string[]];

/** Expands compact tool lines into MCP tool definitions with JSON schemas. */
export function toolsOf(prefix: string, lines: readonly ToolLine[]): CatalogTool[] {
  return lines.map(([name, description, ...params]) => {
    const properties: Record<string, Record<string, unknown>> = {};
    const required: string[] = [];
    for (const spec of params) {
      const [rawName, type, ...rest] = spec.split(':');
      const propertyDescription = rest.join(':');
      const isRequired = rawName!.endsWith('*');
      const property = isRequired ? rawName!.slice(0, -1) : rawName!;
      if (isRequired) required.push(property);
      properties[property] = { ...schemaOf(type!), description: propertyDescription };
    }
    return {
      name: `${prefix}_${name}`,
      description,
      inputSchema: { type: 'object', properties, required, additionalProperties: false },
    };
  });
}

function schemaOf(type: string): Record<string, unknown> {
  if (type.includes('|')) return { type: 'string', enum: type.split('|') };
  if (type === 'string[]') return { type: 'array', items: { type: 'string' } };
  return { type };
}
