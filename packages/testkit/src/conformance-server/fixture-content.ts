import { randomBytes } from 'node:crypto';
import {
  completable,
  createRequestStateCodec,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  McpServer,
  MissingRequiredClientCapabilityError,
  ResourceTemplate,
  type CallToolResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod';

// A 1×1 PNG and a tiny WAV header: the scenarios only check that data and mimeType are present.
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV_EMPTY = Buffer.from(
  'RIFF$\u0000\u0000\u0000WAVEfmt \u0010\u0000\u0000\u0000\u0001\u0000\u0001\u0000D\u00ac\u0000\u0000\u0088X\u0001\u0000\u0002\u0000\u0010\u0000data\u0000\u0000\u0000\u0000',
  'latin1',
).toString('base64');

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const noArgs = z.object({});

/** The HMAC key of requestState: one per process (the fixture is one process, so every round reaches it). */
const stateCodec = createRequestStateCodec<{ step: number; name?: string }>({ key: randomBytes(32) });

/** What one fixture instance needs from its host: the list-changed hooks (stateless listen streams, or the session). */
export interface FixtureHooks {
  toolsChanged(): void;
  promptsChanged(): void;
}

/** Client capabilities of the request: the 2026-07-28 envelope, else the session's initialize. */
function clientCapabilities(server: McpServer, ctx: ServerContext): Record<string, unknown> {
  const meta = ctx.mcpReq._meta;
  const fromEnvelope = meta?.['io.modelcontextprotocol/clientCapabilities'];
  if (fromEnvelope && typeof fromEnvelope === 'object') return fromEnvelope as Record<string, unknown>;
  return server.server.getClientCapabilities() ?? {};
}

/**
 * The conformance fixture's content on one McpServer (2.x SDK): every tool, resource, resource
 * template and prompt the official suite's server scenarios call, written once for both protocol
 * eras (multi-round-trip handlers; the SDK's legacy shim turns them into real server→client
 * requests on 2025-era sessions).
 */
export function createFixtureServer(hooks: FixtureHooks): McpServer {
  const server = new McpServer(
    { name: 'agentgw-conformance-fixture', version: '1.0.0' },
    {
      capabilities: {
        logging: {},
        completions: {},
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
      },
      requestState: { verify: (state, ctx) => stateCodec.verify(state, ctx) },
    },
  );
  registerContentTools(server);
  registerInteractiveTools(server);
  registerProtocolTools(server, hooks);
  registerResources(server);
  registerPrompts(server);
  // 2025-era subscriptions: accepted and acknowledged (the fixture's resources never change).
  server.server.setRequestHandler('resources/subscribe', () => ({}));
  server.server.setRequestHandler('resources/unsubscribe', () => ({}));
  return server;
}

function registerContentTools(server: McpServer): void {
  server.registerTool('test_simple_text', { description: 'Returns simple text', inputSchema: noArgs }, () =>
    text('This is a simple text response for testing.'),
  );
  server.registerTool('test_image_content', { description: 'Returns an image', inputSchema: noArgs }, () => ({
    content: [{ type: 'image', data: PNG_1PX, mimeType: 'image/png' }],
  }));
  server.registerTool('test_audio_content', { description: 'Returns audio', inputSchema: noArgs }, () => ({
    content: [{ type: 'audio', data: WAV_EMPTY, mimeType: 'audio/wav' }],
  }));
  server.registerTool(
    'test_embedded_resource',
    { description: 'Returns an embedded resource', inputSchema: noArgs },
    () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  );
  server.registerTool(
    'test_multiple_content_types',
    { description: 'Returns text, image and a resource', inputSchema: noArgs },
    () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG_1PX, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: '{"test":"data","value":123}',
          },
        },
      ],
    }),
  );
  server.registerTool('test_error_handling', { description: 'Always fails', inputSchema: noArgs }, () => ({
    isError: true,
    content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
  }));
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Tool with JSON Schema 2020-12 features',
      inputSchema: fromJsonSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: {
          address: {
            $anchor: 'addressDef',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } },
          },
        },
        properties: {
          name: { type: 'string' },
          address: { $ref: '#/$defs/address' },
          contactMethod: { type: 'string', enum: ['phone', 'email'] },
          phone: { type: 'string' },
          email: { type: 'string' },
        },
        allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
        if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
        then: { required: ['phone'] },
        else: { required: ['email'] },
        additionalProperties: false,
      }),
    },
    (args) => text(`received ${JSON.stringify(args)}`),
  );
}

/** Tools that ask the client something: written as multi-round-trip handlers, so both eras are served. */
function registerInteractiveTools(server: McpServer): void {
  server.registerTool(
    'test_sampling',
    { description: 'Asks the client for a completion', inputSchema: z.object({ prompt: z.string() }) },
    ({ prompt }, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'llm');
      if (answer.kind !== 'sampling')
        return inputRequired({
          inputRequests: {
            llm: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
              maxTokens: 100,
            }),
          },
        });
      const content = answer.result.content;
      return text(
        `LLM response: ${!Array.isArray(content) && content.type === 'text' ? content.text : JSON.stringify(content)}`,
      );
    },
  );
  server.registerTool(
    'test_elicitation',
    { description: 'Asks the user for input', inputSchema: z.object({ message: z.string() }) },
    ({ message }, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'user');
      if (answer.kind !== 'elicit') {
        const requestedSchema = {
          type: 'object' as const,
          properties: {
            username: { type: 'string' as const, description: "User's response" },
            email: { type: 'string' as const, description: "User's email address" },
          },
          required: ['username', 'email'],
        };
        return inputRequired({ inputRequests: { user: inputRequired.elicit({ message, requestedSchema }) } });
      }
      return text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
    },
  );
  elicitationTool(server, 'test_elicitation_sep1034_defaults', 'Elicitation with defaults', {
    type: 'object',
    properties: {
      name: { type: 'string', default: 'John Doe' },
      age: { type: 'integer', default: 30 },
      score: { type: 'number', default: 95.5 },
      status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
      verified: { type: 'boolean', default: true },
    },
  });
  elicitationTool(server, 'test_elicitation_sep1330_enums', 'Elicitation with every enum form', {
    type: 'object',
    properties: {
      untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
      titledSingle: {
        type: 'string',
        oneOf: [
          { const: 'value1', title: 'First Option' },
          { const: 'value2', title: 'Second Option' },
          { const: 'value3', title: 'Third Option' },
        ],
      },
      legacyEnum: {
        type: 'string',
        enum: ['opt1', 'opt2', 'opt3'],
        enumNames: ['Option One', 'Option Two', 'Option Three'],
      },
      untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
      titledMulti: {
        type: 'array',
        items: {
          anyOf: [
            { const: 'value1', title: 'First Choice' },
            { const: 'value2', title: 'Second Choice' },
            { const: 'value3', title: 'Third Choice' },
          ],
        },
      },
    },
  });
  registerInputRequiredTools(server);
}

function elicitationTool(
  server: McpServer,
  name: string,
  description: string,
  requestedSchema: Record<string, unknown>,
): void {
  server.registerTool(name, { description, inputSchema: noArgs }, (_args, ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'form');
    if (answer.kind !== 'elicit')
      return inputRequired({
        inputRequests: {
          form: inputRequired.elicit({
            message: description,
            requestedSchema: requestedSchema as Parameters<typeof inputRequired.elicit>[0]['requestedSchema'],
          }),
        },
      });
    return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
  });
}

const nameSchema = { type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] };

/** The SEP-2322 (input-required result) scenario tools. */
function registerInputRequiredTools(server: McpServer): void {
  server.registerTool(
    'test_input_required_result_elicitation',
    { description: 'Asks for a name, then greets', inputSchema: noArgs },
    (_args, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'user_name');
      if (answer.kind !== 'elicit' || answer.action !== 'accept' || typeof answer.content?.name !== 'string')
        return inputRequired({
          inputRequests: {
            user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }),
          },
        });
      return text(`Hello, ${answer.content.name}!`);
    },
  );
  server.registerTool(
    'test_input_required_result_sampling',
    { description: 'Asks the client model a question', inputSchema: noArgs },
    (_args, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'capital_question');
      if (answer.kind !== 'sampling')
        return inputRequired({
          inputRequests: {
            capital_question: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
              maxTokens: 100,
            }),
          },
        });
      const content = answer.result.content;
      return text(
        `Model said: ${!Array.isArray(content) && content.type === 'text' ? content.text : JSON.stringify(content)}`,
      );
    },
  );
  server.registerTool(
    'test_input_required_result_list_roots',
    { description: 'Asks for the client roots', inputSchema: noArgs },
    (_args, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'client_roots');
      if (answer.kind !== 'roots') return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
      return text(`Roots: ${answer.roots.map((root) => root.uri).join(', ') || '(none)'}`);
    },
  );
  server.registerTool(
    'test_input_required_result_request_state',
    { description: 'Round-trips requestState', inputSchema: noArgs },
    async (_args, ctx) => {
      const state = ctx.mcpReq.requestState<{ step: number }>();
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
      if (state?.step === 1 && answer.kind === 'elicit')
        return text(`state-ok: confirmed=${JSON.stringify(answer.content ?? {})}`);
      const requestedSchema = {
        type: 'object' as const,
        properties: { ok: { type: 'boolean' as const } },
        required: ['ok'],
      };
      return inputRequired({
        inputRequests: { confirm: inputRequired.elicit({ message: 'Please confirm', requestedSchema }) },
        requestState: await stateCodec.mint({ step: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_tampered_state',
    { description: 'Signs its requestState', inputSchema: noArgs },
    async (_args, ctx) => {
      if (ctx.mcpReq.requestState<{ step: number }>()?.step === 1) return text('state verified');
      return inputRequired({
        inputRequests: { confirm: inputRequired.elicit({ message: 'Please confirm', requestedSchema: nameSchema }) },
        requestState: await stateCodec.mint({ step: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_multiple_inputs',
    { description: 'Asks for three inputs at once', inputSchema: noArgs },
    async (_args, ctx) => {
      const responses = ctx.mcpReq.inputResponses;
      const kinds = ['user_name', 'greeting', 'client_roots'].map((key) => inputResponse(responses, key).kind);
      if (ctx.mcpReq.requestState<{ step: number }>()?.step === 1 && !kinds.includes('missing'))
        return text(`All inputs received: ${kinds.join(', ')}`);
      return inputRequired({
        inputRequests: {
          user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }),
          greeting: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
            maxTokens: 50,
          }),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await stateCodec.mint({ step: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_multi_round',
    { description: 'Two rounds of questions', inputSchema: noArgs },
    async (_args, ctx) => {
      const state = ctx.mcpReq.requestState<{ step: number; name?: string }>();
      const responses = ctx.mcpReq.inputResponses;
      const step1 = inputResponse(responses, 'step1');
      const step2 = inputResponse(responses, 'step2');
      if (state?.step === 2 && step2.kind === 'elicit')
        return text(`Done: ${state.name ?? '?'} likes ${JSON.stringify(step2.content?.color)}`);
      if (state?.step === 1 && step1.kind === 'elicit') {
        const requestedSchema = {
          type: 'object' as const,
          properties: { color: { type: 'string' as const } },
          required: ['color'],
        };
        return inputRequired({
          inputRequests: {
            step2: inputRequired.elicit({ message: 'Step 2: What is your favorite color?', requestedSchema }),
          },
          requestState: await stateCodec.mint({ step: 2, name: String(step1.content?.name ?? '') }),
        });
      }
      return inputRequired({
        inputRequests: {
          step1: inputRequired.elicit({ message: 'Step 1: What is your name?', requestedSchema: nameSchema }),
        },
        requestState: await stateCodec.mint({ step: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_capabilities',
    { description: 'Asks only for what the client supports', inputSchema: noArgs },
    (_args, ctx) => {
      if (Object.keys(ctx.mcpReq.inputResponses ?? {}).length > 0) return text('inputs received');
      const capabilities = clientCapabilities(server, ctx);
      const requests: Record<string, ReturnType<typeof inputRequired.listRoots>> = {};
      if (capabilities.elicitation)
        requests.ask = inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema });
      if (capabilities.sampling)
        requests.sample = inputRequired.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
          maxTokens: 20,
        });
      if (capabilities.roots) requests.roots = inputRequired.listRoots();
      if (Object.keys(requests).length === 0) return text('the client declared no capability to ask with');
      return inputRequired({ inputRequests: requests });
    },
  );
  server.registerTool(
    'test_streaming_elicitation',
    { description: 'Asks for a name on the request stream', inputSchema: noArgs },
    (_args, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'user_name');
      if (answer.kind === 'elicit') return text('thanks');
      return inputRequired({
        inputRequests: {
          user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }),
        },
      });
    },
  );
  server.registerTool(
    'test_missing_capability',
    { description: 'Needs the client sampling capability', inputSchema: noArgs },
    (_args, ctx) => {
      if (!clientCapabilities(server, ctx).sampling)
        throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { sampling: {} } });
      return text('the client can sample');
    },
  );
}

/** Logging, progress, SSE polling and list-change hooks. */
function registerProtocolTools(server: McpServer, hooks: FixtureHooks): void {
  server.registerTool(
    'test_tool_with_logging',
    { description: 'Logs three messages', inputSchema: noArgs },
    async (_args, ctx) => {
      await ctx.mcpReq.log('info', 'Tool execution started');
      await pause(50);
      await ctx.mcpReq.log('info', 'Tool processing data');
      await pause(50);
      await ctx.mcpReq.log('info', 'Tool execution completed');
      return text('Logging tool finished');
    },
  );
  server.registerTool(
    'test_logging_tool',
    { description: 'Logs one message', inputSchema: noArgs },
    async (_args, ctx) => {
      await ctx.mcpReq.log('info', 'a log line');
      return text('logged');
    },
  );
  server.registerTool(
    'test_tool_with_progress',
    { description: 'Reports progress 0, 50, 100', inputSchema: noArgs },
    async (_args, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (progressToken !== undefined)
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 100 },
          });
        if (progress < 100) await pause(50);
      }
      return text('Progress tool finished');
    },
  );
  server.registerTool(
    'test_reconnection',
    { description: 'Closes its SSE stream before answering', inputSchema: noArgs },
    async (_args, ctx) => {
      await pause(50);
      ctx.http?.closeSSE?.();
      await pause(150);
      return text('Reconnection test completed successfully');
    },
  );
  server.registerTool(
    'test_trigger_tool_change',
    { description: 'Announces a tool list change', inputSchema: noArgs },
    () => {
      hooks.toolsChanged();
      return text('tools changed');
    },
  );
  server.registerTool(
    'test_trigger_prompt_change',
    { description: 'Announces a prompt list change', inputSchema: noArgs },
    () => {
      hooks.promptsChanged();
      return text('prompts changed');
    },
  );
}

function registerResources(server: McpServer): void {
  server.registerResource(
    'static-text',
    'test://static-text',
    { description: 'A static text resource', mimeType: 'text/plain' },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
    }),
  );
  server.registerResource(
    'static-binary',
    'test://static-binary',
    { description: 'A static binary resource', mimeType: 'image/png' },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG_1PX }],
    }),
  );
  server.registerResource(
    'watched-resource',
    'test://watched-resource',
    { description: 'A resource clients subscribe to', mimeType: 'text/plain' },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'watched' }],
    }),
  );
  server.registerResource(
    'template-data',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'Data by id', mimeType: 'application/json' },
    (uri, variables) => {
      const id = String(variables.id);
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: 'application/json',
            text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
          },
        ],
      };
    },
  );
}

function registerPrompts(server: McpServer): void {
  server.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with two arguments',
      argsSchema: z.object({
        arg1: completable(z.string().describe('First test argument'), (value) =>
          ['paris', 'park', 'party'].filter((word) => word.startsWith(value ?? '')),
        ),
        arg2: z.string().describe('Second test argument'),
      }),
    },
    ({ arg1, arg2 }) => ({
      messages: [
        { role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } },
      ],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    { description: 'A prompt embedding a resource', argsSchema: z.object({ resourceUri: z.string() }) },
    ({ resourceUri }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );
  server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG_1PX, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));
  server.registerPrompt(
    'test_input_required_result_prompt',
    { description: 'A prompt that asks for context first' },
    (ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'user_context');
      if (answer.kind !== 'elicit') {
        const requestedSchema = {
          type: 'object' as const,
          properties: { context: { type: 'string' as const } },
          required: ['context'],
        };
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({ message: 'What context should the prompt use?', requestedSchema }),
          },
        });
      }
      return {
        messages: [
          {
            role: 'user',
            content: { type: 'text', text: `Context: ${JSON.stringify(answer.content?.context ?? '')}` },
          },
        ],
      };
    },
  );
}
