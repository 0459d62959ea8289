/** A tool as an MCP server lists it: read defensively, since every field comes from an upstream. */
export type ListedTool = Readonly<Record<string, unknown>>;

/** The text of each field a tool is searched by. */
export interface ToolFields {
  name: string;
  /** `title`, else `annotations.title`. */
  title: string;
  description: string;
  /** Input schema property names, their titles, descriptions and string enum values, nested objects and array items included. */
  parameters: string;
}

/** Bounds on what one tool contributes, so a hostile definition costs a bounded amount of memory and time. */
export const FIELD_LIMITS = { textChars: 4_096, schemaDepth: 4, schemaProperties: 128, enumValues: 16 } as const;

/** The searchable text of a listed tool; null when it has no string name (such a tool cannot be called either). */
export function fieldsOf(tool: ListedTool): ToolFields | null {
  const { name, title, annotations, description, inputSchema } = tool;
  if (typeof name !== 'string' || name.length === 0) return null;
  const annotationTitle = isObject(annotations) ? annotations.title : undefined;
  const parts: string[] = [];
  schemaText(inputSchema, 0, parts, { properties: 0, chars: 0 });
  return {
    name,
    title: capped(typeof title === 'string' ? title : typeof annotationTitle === 'string' ? annotationTitle : ''),
    description: capped(typeof description === 'string' ? description : ''),
    parameters: parts.join(' '),
  };
}

/** Collects a JSON schema's property text depth-first until a bound is reached. */
function schemaText(
  schema: unknown,
  depth: number,
  out: string[],
  budget: { properties: number; chars: number },
): void {
  if (!isObject(schema) || depth >= FIELD_LIMITS.schemaDepth) return;
  const properties = schema.properties;
  if (isObject(properties)) {
    // for…in rather than Object.entries: a huge properties object is not copied before the bound stops the walk.
    for (const key in properties) {
      if (!Object.hasOwn(properties, key)) continue;
      if (budget.properties >= FIELD_LIMITS.schemaProperties || budget.chars >= FIELD_LIMITS.textChars) return;
      budget.properties += 1;
      push(out, budget, key);
      const property = properties[key];
      if (!isObject(property)) continue;
      if (typeof property.title === 'string') push(out, budget, property.title);
      if (typeof property.description === 'string') push(out, budget, property.description);
      if (Array.isArray(property.enum))
        for (const value of property.enum.slice(0, FIELD_LIMITS.enumValues))
          if (typeof value === 'string') push(out, budget, value);
      schemaText(property, depth + 1, out, budget);
    }
  }
  if (isObject(schema.items)) schemaText(schema.items, depth + 1, out, budget);
}

function push(out: string[], budget: { chars: number }, text: string): void {
  const room = FIELD_LIMITS.textChars - budget.chars;
  if (room <= 0) return;
  const kept = text.length > room ? text.slice(0, room) : text;
  budget.chars += kept.length + 1;
  out.push(kept);
}

const capped = (text: string): string =>
  text.length > FIELD_LIMITS.textChars ? text.slice(0, FIELD_LIMITS.textChars) : text;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
