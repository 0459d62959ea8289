import { statelessRequest } from '@agentgw/mcp-gateway/stateless-rpc';
import { SseEventReader } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHeldCallGateway, type HeldCallGateway } from './held-call.fixtures.js';
import { SDK_2 } from './oauth-test-clients.js';

// Issue 34: a 2026-07-28 client that declared the tasks extension (SEP-2663) gets a held call as a
// task: input_required (or working) while it waits for a person, then the result through tasks/get.

let gw: HeldCallGateway;
/** The person's OAuth access token, from a client signed in through the gateway's OAuth. */
let accessToken: string;

const TASKS = 'io.modelcontextprotocol/tasks';
const QUESTION = 'agentgw-confirmation';
const ARGS = { table: 'users', password: 'hunter2' };
const approve = { action: 'accept', content: { decision: 'approve' } };
const reject = { action: 'accept', content: { decision: 'reject' } };

type Task = Record<string, unknown> & {
  taskId: string;
  status: string;
  inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
  result?: { content?: { text: string }[] };
  error?: { code: number; message: string; data?: Record<string, unknown> };
};
interface Reply {
  status: number;
  body: { result?: Task; error?: { code: number; message: string; data?: Record<string, unknown> } };
}

/** One stateless 2026-07-28 request, declaring form elicitation and (unless told otherwise) the tasks extension. */
async function rpc(token: string, method: string, params: Record<string, unknown>, tasks = true): Promise<Reply> {
  const res = await send(token, method, params, tasks);
  return { status: res.status, body: (await res.json()) as Reply['body'] };
}

/** The request of `rpc`, its response unread (a listen's stream). */
function send(token: string, method: string, params: Record<string, unknown>, tasks = true): Promise<Response> {
  const capabilities = { elicitation: {}, ...(tasks ? { extensions: { [TASKS]: {} } } : {}) };
  return statelessRequest(gw.endpoint().href, { authorization: `Bearer ${token}` }, method, params, capabilities);
}

const callDrop = (token: string, tasks = true) => rpc(token, 'tools/call', { name: 'drop', arguments: ARGS }, tasks);
const getTask = (token: string, taskId: string, tasks = true) => rpc(token, 'tasks/get', { taskId }, tasks);

/** A held drop as a task: created, durable, nothing run; its id, confirmation and audit record. */
async function created(token = accessToken): Promise<{ task: Task; confirmationId: string; auditId: string }> {
  const before = gw.drops();
  const reply = await callDrop(token);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  expect(reply.body.result).toMatchObject({ resultType: 'task' });
  expect(gw.drops()).toBe(before);
  const row = await gw.latestConfirmation();
  expect(row.status).toBe('pending');
  return { task: reply.body.result!, confirmationId: row.id, auditId: row.audit_id! };
}

/** The call's audit record once it has its final status (written through the queue). */
async function auditRecord(auditId: string, status: string) {
  return vi.waitFor(
    async () => {
      const row = await gw.deps.db.selectFrom('audit_logs').selectAll().where('id', '=', auditId).executeTakeFirst();
      expect(row?.status).toBe(status);
      return row!;
    },
    { timeout: 10_000, interval: 50 },
  );
}

beforeAll(async () => {
  gw = await startHeldCallGateway();
  accessToken = (await gw.signIn(SDK_2, 'task client')).tokens()!.access_token;
}, 600_000);

afterAll(async () => {
  await gw?.close();
});

describe('a held call of a client that declared the tasks extension', () => {
  it('is a task: input_required with the question; approved on the console → completed with the result, run once under concurrent polls', async () => {
    const before = gw.drops();
    const { task, confirmationId, auditId } = await created();
    expect(task).toMatchObject({
      status: 'input_required',
      pollIntervalMs: expect.any(Number),
      createdAt: expect.any(String),
      lastUpdatedAt: expect.any(String),
      inputRequests: {
        [QUESTION]: { method: 'elicitation/create', params: { requestedSchema: { required: ['decision'] } } },
      },
    });
    // The task lives as long as its confirmation (CONFIRMATION_TIMEOUT_MS at most).
    expect(task.ttlMs).toBeGreaterThan(0);
    expect(task.ttlMs).toBeLessThanOrEqual(gw.deps.config.CONFIRMATION_TIMEOUT_MS);
    expect(task.taskId).not.toContain(confirmationId);
    expect(String(task.inputRequests![QUESTION]!.params.message)).not.toContain('hunter2');

    const polled = await getTask(accessToken, task.taskId);
    expect(polled.body.result).toMatchObject({ resultType: 'complete', taskId: task.taskId, status: 'input_required' });

    expect((await gw.post(`/api/v1/confirmation/${confirmationId}/confirm`, gw.userToken, {})).status).toBe(200);
    const polls = await Promise.all(Array.from({ length: 4 }, () => getTask(accessToken, task.taskId)));
    const statuses = polls.map((p) => p.body.result!.status);
    // Exactly one poll ran it; the others saw it running or already done.
    expect(statuses.filter((s) => s === 'completed').length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 'completed' || s === 'working')).toBe(true);
    const done = await vi.waitFor(
      async () => {
        const reply = await getTask(accessToken, task.taskId);
        expect(reply.body.result!.status).toBe('completed');
        return reply.body.result!;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(done.result?.content?.[0]?.text).toBe(`dropped ${before + 1}`);
    expect(gw.drops()).toBe(before + 1);
    expect((await getTask(accessToken, task.taskId)).body.result).toEqual(done);
    expect(await gw.latestConfirmation()).toMatchObject({ status: 'consumed', decided_via: 'console' });
    await auditRecord(auditId, 'completed');
  });

  it('tasks/update approves from the client (first decision wins, a second answer changes nothing)', async () => {
    const before = gw.drops();
    const { task, auditId } = await created();
    const ack = await rpc(accessToken, 'tasks/update', {
      taskId: task.taskId,
      inputResponses: { [QUESTION]: approve },
    });
    expect(ack.body.result).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    const late = await rpc(accessToken, 'tasks/update', {
      taskId: task.taskId,
      inputResponses: { [QUESTION]: reject },
    });
    expect(late.body.error).toBeUndefined();
    expect(await gw.latestConfirmation()).toMatchObject({ status: 'confirmed', decided_via: 'client' });
    const done = await getTask(accessToken, task.taskId);
    expect(done.body.result).toMatchObject({
      status: 'completed',
      result: { content: [{ text: `dropped ${before + 1}` }] },
    });
    await auditRecord(auditId, 'completed');
  });

  it('rejected in the client or on the console → failed with the held call’s refusal; not run', async () => {
    const before = gw.drops();
    const first = await created();
    await rpc(accessToken, 'tasks/update', { taskId: first.task.taskId, inputResponses: { [QUESTION]: reject } });
    const refused = await getTask(accessToken, first.task.taskId);
    expect(refused.body.result).toMatchObject({
      status: 'failed',
      error: { code: -32004, data: { decision: 'rejected' } },
    });
    await auditRecord(first.auditId, 'rejected');

    const second = await created();
    expect((await gw.post(`/api/v1/confirmation/${second.confirmationId}/reject`, gw.userToken, {})).status).toBe(200);
    expect((await getTask(accessToken, second.task.taskId)).body.result).toMatchObject({
      status: 'failed',
      error: { code: -32004 },
    });
    expect(gw.drops()).toBe(before);
  });

  it('tasks/cancel withdraws the confirmation: cancelled, the console cannot approve it after, the record says so', async () => {
    const before = gw.drops();
    const { task, confirmationId, auditId } = await created();
    const ack = await rpc(accessToken, 'tasks/cancel', { taskId: task.taskId });
    expect(ack.body.error).toBeUndefined();
    expect((await getTask(accessToken, task.taskId)).body.result).toMatchObject({ status: 'cancelled' });
    expect((await gw.post(`/api/v1/confirmation/${confirmationId}/confirm`, gw.userToken, {})).status).toBe(409);
    expect(await gw.latestConfirmation()).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining('cancelled'),
    });
    expect((await auditRecord(auditId, 'rejected')).error).toContain('cancelled');
    expect(gw.drops()).toBe(before);
  });

  it('is Unknown task (-32602) to another principal and for a forged id; -32021 to a request without the extension', async () => {
    const { task } = await created();
    for (const id of [task.taskId, `${task.taskId.slice(0, -4)}AAAA`]) {
      const token = id === task.taskId ? gw.adminToken : accessToken;
      expect((await getTask(token, id)).body.error).toMatchObject({ code: -32602 });
    }
    expect((await rpc(gw.adminToken, 'tasks/cancel', { taskId: task.taskId })).body.error).toMatchObject({
      code: -32602,
    });
    expect((await getTask(accessToken, task.taskId, false)).body.error).toMatchObject({ code: -32021 });
    expect(await gw.latestConfirmation()).toMatchObject({ status: 'pending' });
  });

  it('a client without the extension still gets the input_required round', async () => {
    const reply = await callDrop(accessToken, false);
    expect(reply.body.result).toMatchObject({
      resultType: 'input_required',
      requestState: expect.stringMatching(/^agentgw-held:/),
    });
  });

  it('an agent runtime’s held call is a working task, never asked in the client; approved on the console → its result', async () => {
    const made = await gw.post('/api/v1/admin/agents', gw.adminToken, {
      name: `task-bot-${Date.now()}`,
      upstreamUrl: 'http://127.0.0.1:9/a',
    });
    const agent = (await made.json()) as { agent: { id: string }; runtime_token: string };
    const rule = await gw.post('/api/v1/admin/provider-access', gw.adminToken, {
      subjectType: 'agent',
      subjectId: agent.agent.id,
      providerId: gw.providerId,
      action: 'require_confirmation',
      toolPattern: 'drop',
      confirmCarriers: ['console', 'client'],
    });
    expect(rule.status).toBe(201);
    const before = gw.drops();
    const { task, confirmationId } = await created(agent.runtime_token);
    expect(task.status).toBe('working');
    expect(task).not.toHaveProperty('inputRequests');
    expect(String(task.statusMessage)).toContain('console');
    // Its answer in the client is no answer.
    await rpc(agent.runtime_token, 'tasks/update', { taskId: task.taskId, inputResponses: { [QUESTION]: approve } });
    expect(await gw.latestConfirmation()).toMatchObject({ status: 'pending' });
    expect((await gw.post(`/api/v1/confirmation/${confirmationId}/confirm`, gw.adminToken, {})).status).toBe(200);
    expect((await getTask(agent.runtime_token, task.taskId)).body.result).toMatchObject({
      status: 'completed',
      result: { content: [{ text: `dropped ${before + 1}` }] },
    });
  }, 60_000);
});

describe('a listen naming held-call tasks (SEP-2663 notifications/tasks)', () => {
  type Notice = { method: string; params: Task & { notifications?: Record<string, unknown> } };
  const isTaskNotice = (data: unknown) => (data as Notice).method === 'notifications/tasks';

  /** A `subscriptions/listen` of `token` naming `taskIds`, read past its acknowledgement (returned). */
  async function listen(token: string, taskIds: string[], client: AbortController) {
    const res = await send(token, 'subscriptions/listen', { notifications: { taskIds } });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = new SseEventReader(res);
    const ack = await reader.nextOf('message', 10_000);
    expect((ack.data as Notice).method).toBe('notifications/subscriptions/acknowledged');
    client.signal.addEventListener('abort', () => void reader.close(), { once: true });
    return { reader, agreed: (ack.data as Notice).params.notifications };
  }

  it('pushes an approval on the console as working (not run: the next tasks/get runs it); another principal naming the id is told nothing', async () => {
    const client = new AbortController();
    try {
      const before = gw.drops();
      const { task, confirmationId } = await created();
      const mine = await listen(accessToken, [task.taskId], client);
      expect(mine.agreed).toEqual({ taskIds: [task.taskId] });
      const foreign = await listen(gw.adminToken, [task.taskId], client);
      expect(foreign.agreed).toEqual({});

      expect((await gw.post(`/api/v1/confirmation/${confirmationId}/confirm`, gw.userToken, {})).status).toBe(200);
      const pushed = (await mine.reader.nextOf('message', 10_000, isTaskNotice)).data as Notice;
      expect(pushed.params).toMatchObject({
        taskId: task.taskId,
        status: 'working',
        statusMessage: expect.stringContaining('approved'),
        createdAt: task.createdAt,
        pollIntervalMs: expect.any(Number),
        _meta: { 'io.modelcontextprotocol/subscriptionId': 1 },
      });
      expect(pushed.params).not.toHaveProperty('result');
      expect(gw.drops()).toBe(before);
      expect(await gw.latestConfirmation()).toMatchObject({ status: 'confirmed' });

      expect((await getTask(accessToken, task.taskId)).body.result).toMatchObject({
        status: 'completed',
        result: { content: [{ text: `dropped ${before + 1}` }] },
      });
      // The same in-process bus event reached every listen by now; the foreign one follows no task.
      await expect(foreign.reader.nextOf('message', 1_000, isTaskNotice)).rejects.toThrow(/no SSE event in time/);
    } finally {
      client.abort();
    }
  });

  it('pushes a rejection on the console as failed with the held call’s refusal, and a tasks/cancel as cancelled', async () => {
    const client = new AbortController();
    try {
      const before = gw.drops();
      const rejected = await created();
      const cancelled = await created();
      const { reader } = await listen(accessToken, [rejected.task.taskId, cancelled.task.taskId], client);

      const refused = await gw.post(`/api/v1/confirmation/${rejected.confirmationId}/reject`, gw.userToken, {});
      expect(refused.status).toBe(200);
      expect(((await reader.nextOf('message', 10_000, isTaskNotice)).data as Notice).params).toMatchObject({
        taskId: rejected.task.taskId,
        status: 'failed',
        error: { code: -32004, data: { decision: 'rejected' } },
      });
      expect((await getTask(accessToken, rejected.task.taskId)).body.result).toMatchObject({
        status: 'failed',
        error: { code: -32004 },
      });

      expect((await rpc(accessToken, 'tasks/cancel', { taskId: cancelled.task.taskId })).body.error).toBeUndefined();
      expect(((await reader.nextOf('message', 10_000, isTaskNotice)).data as Notice).params).toMatchObject({
        taskId: cancelled.task.taskId,
        status: 'cancelled',
      });
      expect(gw.drops()).toBe(before);
    } finally {
      client.abort();
    }
  });
});
