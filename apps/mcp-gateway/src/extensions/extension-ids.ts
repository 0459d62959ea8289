/* The extension ids the gateway advertises in its capabilities (revision-shapes.ts): a leaf, so the capabilities need not import the extension methods. */

/** The tasks extension (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** The skills extension (SEP-2640). */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
