import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** One step of the walk and how it went. */
export interface WalkStep {
  step: string;
  pass: boolean;
  note: string;
}

type JsonSchema = {
  type?: string;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  default?: unknown;
  minimum?: number;
};

/** Arguments for a tool from its input schema: every required property with its default, first enum value or a small value of its type. */
export function argumentsFor(schema: JsonSchema | undefined): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const name of schema?.required ?? []) {
    const property = schema?.properties?.[name] ?? {};
    if (property.default !== undefined) args[name] = property.default;
    else if (property.enum?.length) args[name] = property.enum[0];
    else if (property.type === 'number' || property.type === 'integer') args[name] = Math.max(1, property.minimum ?? 1);
    else if (property.type === 'boolean') args[name] = false;
    else if (property.type === 'array') args[name] = [];
    else if (property.type === 'object') args[name] = {};
    else args[name] = 'conformance';
  }
  return args;
}

/** Tools whose call needs the tasks extension or a browser (task-augmented, URL elicitation): their step is the listing. */
const LISTED_ONLY = /async|url-elicitation|simulate-research-query/;
/** Arguments the schema cannot give: gzip's default input is a URL on the internet; a data URI keeps the walk offline. */
/** trigger-long-running-operation's default (10 s) is the per-call limit: two 1 s steps show its progress as well. */
const OVERRIDES: Record<string, Record<string, unknown>> = {
  'gzip-file-as-resource': { name: 'walk.txt.gz', data: 'data:text/plain;base64,d2FsayB0aGUgZ2F0ZXdheQ==' },
  'trigger-long-running-operation': { duration: 2, steps: 2 },
};
/** server-everything logs every 5 s once simulated logging is on; the walk waits up to two periods for one. */
const LOG_WAIT_MS = 11_000;

/**
 * Drives server-everything at `url` with the 1.x SDK client declaring sampling, elicitation and
 * roots (each answered): the tool list, every tool called with arguments from its schema, log
 * notifications after simulated logging is on, resources and prompts listed and read.
 */
export async function walkEverything(url: string, token: string | null): Promise<WalkStep[]> {
  const steps: WalkStep[] = [];
  const step = async (name: string, body: () => Promise<string>) => {
    try {
      steps.push({ step: name, pass: true, note: await body() });
    } catch (error) {
      steps.push({
        step: name,
        pass: false,
        note: (error instanceof Error ? error.message : String(error)).slice(0, 140),
      });
    }
  };
  const client = new Client(
    { name: 'agentgw-everything-walk', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
  );
  let logs = 0;
  client.setNotificationHandler(LoggingMessageNotificationSchema, () => void logs++);
  client.setRequestHandler(CreateMessageRequestSchema, () => ({
    role: 'assistant',
    content: { type: 'text', text: 'sampled by the walk' },
    model: 'walk-model',
    stopReason: 'endTurn',
  }));
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: {} }));
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///tmp/walk', name: 'walk' }] }));
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  } catch (error) {
    return [
      { step: 'connect', pass: false, note: (error instanceof Error ? error.message : String(error)).slice(0, 140) },
    ];
  }
  try {
    const tools = (await client.listTools().catch(() => ({ tools: [] }))).tools;
    await step('tools/list (16 with sampling, elicitation, roots)', async () => {
      if (tools.length < 16) throw new Error(`${tools.length} tools: ${tools.map((t) => t.name).join(', ')}`);
      return `${tools.length} tools`;
    });
    const callable = tools
      .filter((tool) => !LISTED_ONLY.test(tool.name))
      .sort((a, b) =>
        a.name === 'toggle-simulated-logging'
          ? -1
          : b.name === 'toggle-simulated-logging'
            ? 1
            : a.name.localeCompare(b.name),
      );
    for (const tool of callable) {
      await step(`tools/call ${tool.name}`, async () => {
        const result = await client.callTool(
          { name: tool.name, arguments: OVERRIDES[tool.name] ?? argumentsFor(tool.inputSchema) },
          undefined,
          { timeout: 10_000 },
        );
        if (result.isError) throw new Error(`isError: ${JSON.stringify(result.content).slice(0, 120)}`);
        return `${(result.content as unknown[] | undefined)?.length ?? 0} content item(s)`;
      });
    }
    await step('notifications/message delivered', async () => {
      for (let waited = 0; logs === 0 && waited < LOG_WAIT_MS; waited += 250)
        await new Promise((resolve) => setTimeout(resolve, 250));
      if (logs === 0) throw new Error('no log notification reached the client');
      return `${logs} log notification(s)`;
    });
    await step('resources/list + read', async () => {
      const { resources } = await client.listResources();
      if (resources.length === 0) throw new Error('no resources');
      const read = await client.readResource({ uri: resources[0]!.uri });
      return `${resources.length} resources; read ${read.contents.length} content(s)`;
    });
    await step('prompts/list + get', async () => {
      const { prompts } = await client.listPrompts();
      const simple = prompts.find((prompt) => !prompt.arguments?.some((argument) => argument.required)) ?? prompts[0];
      if (!simple) throw new Error('no prompts');
      const got = await client.getPrompt({ name: simple.name, arguments: {} });
      return `${prompts.length} prompts; ${simple.name}: ${got.messages.length} message(s)`;
    });
  } finally {
    await client.close().catch(() => undefined);
  }
  return steps;
}
