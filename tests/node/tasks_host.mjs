// A host on the official TypeScript MCP client (`@modelcontextprotocol/client`)
// that declares the tasks extension (`io.modelcontextprotocol/tasks`,
// SEP-2663) at `initialize`, driving an ai-tools MCP server whose
// `reports_build` tool starts a long-running operation. Run by
// tests/tests/lro.rs:
//
//   node tasks_host.mjs URL BARE_URL UNTASKED_URL
//
// BARE_URL serves the same tool over a backend without
// `google.longrunning.Operations`; UNTASKED_URL over the first backend, with
// tasks turned off (`McpServer::with_tasks(false)`).
//
// The client has no typed surface for SEP-2663 tasks (its docs: task
// methods have "no SDK runtime"); it sends `tools/call`, `tasks/get` and
// `tasks/cancel` through `client.request` with a result schema of the
// test's own, which is how the client takes an extension's methods.
//
// Prints one line per check (`ok   - ...` or `FAIL - ...`) and then
// `N passed, M failed`; exits 1 when a check failed.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const TASKS = 'io.modelcontextprotocol/tasks';
const TENANT = { 'x-tenant': 'acme' };

const results = [];

function record(name, ok, detail) {
  results.push(ok);
  const suffix = detail === undefined ? '' : `: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`;
  console.log(`${ok ? 'ok  ' : 'FAIL'} - ${name}${suffix}`);
}

async function check(name, body) {
  try {
    record(name, true, await body());
  } catch (error) {
    record(name, false, String(error?.stack ?? error));
  }
}

function assert(condition, message) {
  if (!condition) {
    throw new Error(message);
  }
}

/** A result schema that takes what the server sent as it is. */
const AS_SENT = {
  '~standard': { version: 1, vendor: 'ai-tools-test', validate: (value) => ({ value }) },
};

async function connect(url) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: TENANT },
  });
  const client = new Client(
    { name: 'ai-tools-tasks-host-test', version: '1.0.0' },
    {
      capabilities: { extensions: { [TASKS]: {} } },
      versionNegotiation: { mode: 'legacy' },
    },
  );
  await client.connect(transport);
  return client;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(client, name, args) {
  return client.request({ method: 'tools/call', params: { name, arguments: args } }, AS_SENT);
}

async function get(client, taskId) {
  return client.request({ method: 'tasks/get', params: { taskId } }, AS_SENT);
}

/** Polls `taskId` until it is terminal, as often as the task asks; every state seen. */
async function follow(client, task) {
  const seen = [];
  const deadline = Date.now() + 60_000;
  for (;;) {
    const state = await get(client, task.taskId);
    seen.push(state);
    if (['completed', 'failed', 'cancelled'].includes(state.status)) {
      return seen;
    }
    assert(Date.now() < deadline, `task ${task.taskId} still ${state.status} after 60 s`);
    await sleep(Math.min(state.pollIntervalMs ?? task.pollIntervalMs ?? 200, 200));
  }
}

function text(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

async function main() {
  const url = process.argv[2];
  const client = await connect(url);
  const other = await connect(url);

  let report;
  await check('the server advertises the tasks extension and lists operations_get', async () => {
    const caps = client.getServerCapabilities();
    assert(caps?.extensions?.[TASKS] !== undefined, `capabilities ${JSON.stringify(caps)}`);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    assert(names.includes('reports_build') && names.includes('operations_get'), names.join(', '));
    return names;
  });

  await check('a call of a long-running tool answers with a working task, then its report', async () => {
    const task = await call(client, 'reports_build', { title: 'Q3', work_ms: 1500 });
    assert(typeof task.taskId === 'string' && task.taskId.length > 0, `no taskId in ${JSON.stringify(task)}`);
    assert(task.status === 'working', `status ${task.status}`);
    assert(task.content === undefined, `a task, not a result: ${JSON.stringify(task)}`);
    assert(task.pollIntervalMs > 0, `pollIntervalMs ${task.pollIntervalMs}`);
    const seen = await follow(client, task);
    const working = seen.filter((s) => s.status === 'working');
    assert(working.length >= 2, `polled ${seen.length} times, working ${working.length}: the build takes 1.5 s`);
    assert(working.some((s) => /"percent"/.test(s.statusMessage ?? '')), `no progress in ${JSON.stringify(working)}`);
    const done = seen.at(-1);
    assert(done.status === 'completed', `ended ${done.status}: ${JSON.stringify(done)}`);
    assert(done.taskId === task.taskId, 'another task id');
    const result = done.result;
    assert(result.isError !== true, `an error: ${text(result)}`);
    const written = JSON.parse(text(result));
    // The unpacked Report, as protojson writes it: the id aliased, the int64 as digits.
    assert(/^report-\d+$/.test(written.id), `id ${written.id}`);
    assert(written.title === 'Q3', `title ${written.title}`);
    assert(written.rows === '9007199254740993', `rows ${JSON.stringify(written.rows)}`);
    assert(!('@type' in written), `still packed: ${text(result)}`);
    assert(!UUID.test(text(result)), `a UUID reached the client: ${text(result)}`);
    assert(JSON.stringify(result.structuredContent) === JSON.stringify(written), 'structuredContent differs');
    report = { task, written };
    return { polls: seen.length, result: written };
  });

  await check('a finished task reads the same again', async () => {
    const again = await get(client, report.task.taskId);
    assert(again.status === 'completed', again.status);
    assert(JSON.parse(text(again.result)).id === report.written.id, 'another alias for the same report');
  });

  await check('a failed operation is a completed task with an error result', async () => {
    const task = await call(client, 'reports_build', { title: 'empty', work_ms: 300, fail: true });
    assert(task.status === 'working', `status ${task.status}`);
    const done = (await follow(client, task)).at(-1);
    assert(done.status === 'completed', `ended ${done.status}`);
    assert(done.result.isError === true, `not an error: ${JSON.stringify(done.result)}`);
    const message = text(done.result);
    assert(message.includes('FAILED_PRECONDITION'), message);
    assert(message.includes('the dataset of empty has no rows'), message);
    return message;
  });

  await check('tasks/cancel reaches the service and the task ends cancelled', async () => {
    const task = await call(client, 'reports_build', { title: 'long', work_ms: 60000 });
    assert(task.status === 'working', `status ${task.status}`);
    const ack = await client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, AS_SENT);
    assert(ack && typeof ack === 'object', `ack ${JSON.stringify(ack)}`);
    const state = await get(client, task.taskId);
    assert(state.status === 'cancelled', `status ${state.status}: ${JSON.stringify(state)}`);
    return state.statusMessage;
  });

  await check('a task id is refused in another session', async () => {
    let refused;
    try {
      await get(other, report.task.taskId);
    } catch (error) {
      refused = error;
    }
    assert(refused, 'another session read the task');
    assert(refused.code === -32602, `code ${refused.code}: ${refused.message}`);
    assert(/no task/.test(refused.message), refused.message);
    let cancelled;
    try {
      await other.request({ method: 'tasks/cancel', params: { taskId: report.task.taskId } }, AS_SENT);
    } catch (error) {
      cancelled = error;
    }
    assert(cancelled?.code === -32602, `cancel from another session: ${cancelled?.message ?? 'accepted'}`);
    // Still the first session's.
    assert((await get(client, report.task.taskId)).status === 'completed', 'the owner lost it');
    return refused.message;
  });

  await check('an id the server never gave is refused', async () => {
    let refused;
    try {
      await get(client, 'not-a-task');
    } catch (error) {
      refused = error;
    }
    assert(refused?.code === -32602, `code ${refused?.code}: ${refused?.message}`);
    return refused.message;
  });

  await check('a call the executor refuses is answered at once, not as a task', async () => {
    const result = await call(client, 'reports_build', { title: 'Q3', pages: 3 });
    assert(result.taskId === undefined, `a task: ${JSON.stringify(result)}`);
    assert(result.isError === true, `not an error: ${JSON.stringify(result)}`);
    assert(/pages/.test(text(result)), text(result));
    return text(result);
  });

  const bare = await connect(process.argv[3]);
  await check('a backend without the Operations service: tasks/get says so', async () => {
    const task = await call(bare, 'reports_build', { title: 'bare', work_ms: 100 });
    assert(task.status === 'working', `status ${task.status}`);
    let refused;
    try {
      await get(bare, task.taskId);
    } catch (error) {
      refused = error;
    }
    assert(refused?.code === -32602, `code ${refused?.code}: ${refused?.message}`);
    assert(/does not implement google\.longrunning\.Operations/.test(refused.message), refused.message);
    return refused.message;
  });

  const untasked = await connect(process.argv[4]);
  await check('a server with tasks off answers a task-capable client with the operation', async () => {
    const caps = untasked.getServerCapabilities();
    assert(caps?.extensions?.[TASKS] === undefined, `capabilities ${JSON.stringify(caps)}`);
    const result = await call(untasked, 'reports_build', { title: 'plain', work_ms: 100 });
    assert(result.taskId === undefined, `a task: ${JSON.stringify(result)}`);
    const operation = JSON.parse(text(result));
    assert(typeof operation.name === 'string' && operation.name.length > 0, text(result));
    const { tools } = await untasked.listTools();
    assert(tools.some((t) => t.name === 'operations_get'), 'no operations_get');
    return operation;
  });

  await client.close();
  await other.close();
  await bare.close();
  await untasked.close();
  const failed = results.filter((ok) => !ok).length;
  console.log(`${results.length - failed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((error) => {
  console.log(`FAIL - the host crashed: ${error?.stack ?? error}`);
  process.exit(1);
});
