// A host built on the official TypeScript MCP client of the 2026-07-28
// generation (`@modelcontextprotocol/client`), driving the `ai-tools` gateway
// over streamable HTTP without sessions. Run by cli/tests/javascript_host.rs
// against `ai-tools mcp ... --http 127.0.0.1:0 --alias-scope-header
// x-principal` in front of the links service:
//
//   node stateless_host.mjs http://127.0.0.1:PORT/mcp
//
// Protocol 2026-07-28 has no `initialize` and no `Mcp-Session-Id`: every
// request says who is calling, here in the header `x-principal` that a
// trusted front proxy would set. The client sends it on every request
// (`requestInit.headers` of `StreamableHTTPClientTransport`), and is told to
// speak 2026-07-28 with `versionNegotiation`: `'auto'` (probe
// `server/discover`, fall back to `initialize` on anything else) where a
// host would leave it to the client, `{ pin: '2026-07-28' }` elsewhere.
//
// The checks: aliases (`link-1`, `link-2`) that a caller's results give out
// resolve in that caller's later requests, from another client instance
// (other connections, no session), and never for another caller; no
// `initialize` is sent and no session is handed out; a request without the
// header is refused, naming it.
//
// Prints one line per check (`ok   - ...` or `FAIL - ...`) and then
// `N passed, M failed`; exits 1 when a check failed.

import { readFileSync } from 'node:fs';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const CLIENT_VERSION = JSON.parse(
  readFileSync(
    new URL('./node_modules/@modelcontextprotocol/client/package.json', import.meta.url),
    'utf8',
  ),
).version;

const STATELESS = '2026-07-28';
const SCOPE_HEADER = 'x-principal';

const results = [];

function record(name, ok, detail) {
  results.push(ok);
  const suffix = detail === undefined ? '' : `: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`;
  console.log(`${ok ? 'ok  ' : 'FAIL'} - ${name}${suffix}`);
}

/** Runs `body`; a thrown error is a failed check, a returned value its detail. */
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

function text(result) {
  return (result.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/** The link of a successful links_* result: `structuredContent.link`, which the text repeats. */
function link(result) {
  assert(!result.isError, `the call failed: ${text(result)}`);
  const fromText = JSON.parse(text(result));
  const structured = result.structuredContent?.link;
  assert(structured, `no structuredContent.link in ${JSON.stringify(result)}`);
  assert(
    JSON.stringify(fromText.link) === JSON.stringify(structured),
    `structuredContent.link ${JSON.stringify(structured)} differs from the text ${text(result)}`,
  );
  return structured;
}

/**
 * What went over the wire, per client: each POST's JSON-RPC method, the
 * scope header it carried, the answer's status and any `Mcp-Session-Id`.
 */
function recordingFetch(log) {
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    let method = null;
    if (typeof init?.body === 'string') {
      try {
        method = JSON.parse(init.body).method ?? null;
      } catch {
        method = '(not JSON)';
      }
    }
    const response = await fetch(url, init);
    log.push({
      verb: init?.method ?? 'GET',
      method,
      principal: headers.get(SCOPE_HEADER),
      version: headers.get('mcp-protocol-version'),
      status: response.status,
      session: response.headers.get('mcp-session-id'),
    });
    return response;
  };
}

/** A new client for `principal` (none: no scope header), connected. */
async function connect(url, principal, mode) {
  const log = [];
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: principal === null ? {} : { headers: { [SCOPE_HEADER]: principal } },
    fetch: recordingFetch(log),
  });
  const client = new Client(
    { name: 'ai-tools-stateless-host-test', version: '1.0.0' },
    { versionNegotiation: { mode } },
  );
  await client.connect(transport);
  return { client, transport, log };
}

/** The client spoke 2026-07-28 statelessly: no initialize, no session, the header on every POST. */
function statelessWire({ client, transport, log }, principal) {
  const version = client.getNegotiatedProtocolVersion?.();
  const era = client.getProtocolEra?.();
  assert(version === undefined || version === STATELESS, `negotiated ${version}, not ${STATELESS}`);
  assert(era === undefined || era === 'modern', `the protocol era is ${era}, not modern`);
  const posts = log.filter((r) => r.verb === 'POST');
  assert(posts.length > 0, 'no POST recorded');
  const initialize = posts.filter((r) => r.method === 'initialize' || r.method === 'notifications/initialized');
  assert(initialize.length === 0, `the client sent ${initialize.map((r) => r.method).join(', ')}`);
  const sessions = log.filter((r) => r.session);
  assert(sessions.length === 0, `the server gave a session: ${JSON.stringify(sessions)}`);
  assert(transport.sessionId === undefined, `the transport holds session ${transport.sessionId}`);
  const unscoped = posts.filter((r) => r.principal !== principal);
  assert(unscoped.length === 0, `POSTs without ${SCOPE_HEADER}: ${principal}: ${JSON.stringify(unscoped)}`);
  return { version, era, methods: posts.map((r) => r.method) };
}

async function main() {
  const url = process.argv[2];
  if (!url) {
    console.error('usage: node stateless_host.mjs http://127.0.0.1:PORT/mcp');
    process.exit(2);
  }
  record('client', true, { '@modelcontextprotocol/client': CLIENT_VERSION, node: process.version });

  // Alice, as a host that leaves the version to the client: it probes
  // `server/discover` and goes stateless.
  const alice = await connect(url, 'alice', 'auto');
  try {
    await check(`alice (auto): the client negotiates ${STATELESS} by server/discover`, async () => {
      assert(typeof alice.client.getNegotiatedProtocolVersion === 'function', 'the client exposes no negotiated version');
      const version = alice.client.getNegotiatedProtocolVersion();
      assert(version === STATELESS, `negotiated ${version}, not ${STATELESS}`);
      assert(alice.log.some((r) => r.method === 'server/discover'), 'no server/discover was sent');
      return { version, era: alice.client.getProtocolEra?.(), discover: alice.log[0] };
    });

    await check("alice: links_create twice gives link-1 and link-2", async () => {
      const first = link(
        await alice.client.callTool({
          name: 'links_create',
          arguments: { destination: 'https://alice.example/1', name: 'A1' },
        }),
      );
      const second = link(
        await alice.client.callTool({
          name: 'links_create',
          arguments: { destination: 'https://alice.example/2', name: 'A2' },
        }),
      );
      assert(
        first.id === 'link-1' && second.id === 'link-2',
        `the ids are ${first.id} and ${second.id}, not link-1 and link-2`,
      );
      return { ids: [first.id, second.id] };
    });

    await check('alice: stateless on the wire (no initialize, no session, the header on every POST)', async () =>
      statelessWire(alice, 'alice'),
    );
  } finally {
    await alice.client.close();
  }

  // A new client, and with it new connections: the aliases are the
  // caller's, not a connection's.
  const aliceAgain = await connect(url, 'alice', { pin: STATELESS });
  try {
    await check("alice, a new client: links_update of link-2 reaches her second link", async () => {
      const result = await aliceAgain.client.callTool({
        name: 'links_update',
        arguments: { link_id: 'link-2', name: 'A2 renamed' },
      });
      const updated = link(result);
      assert(
        updated.destination === 'https://alice.example/2',
        `link-2 is ${JSON.stringify(updated)}, not alice's https://alice.example/2`,
      );
      assert(updated.name === 'A2 renamed', `the name is ${updated.name}`);
      return { link: updated };
    });

    await check('alice, a new client: stateless on the wire', async () => statelessWire(aliceAgain, 'alice'));
  } finally {
    await aliceAgain.client.close();
  }

  const bob = await connect(url, 'bob', { pin: STATELESS });
  try {
    await check("bob: links_create gives his own link-1", async () => {
      const created = link(
        await bob.client.callTool({
          name: 'links_create',
          arguments: { destination: 'https://bob.example/1', name: 'B1' },
        }),
      );
      assert(created.id === 'link-1', `bob's first link is ${created.id}, not link-1`);
      return { id: created.id };
    });

    await check("bob: links_update of alice's link-2 is an error result naming link-2", async () => {
      const result = await bob.client.callTool({
        name: 'links_update',
        arguments: { link_id: 'link-2', name: 'stolen' },
      });
      const message = text(result);
      assert(result.isError === true, `the call was not refused: ${message}`);
      assert(message.includes('link-2'), `the error does not name link-2: ${message}`);
      return message;
    });

    await check("bob: his link-1 is his, not alice's", async () => {
      const own = link(
        await bob.client.callTool({
          name: 'links_update',
          arguments: { link_id: 'link-1', name: 'B1 renamed' },
        }),
      );
      assert(own.destination === 'https://bob.example/1', `bob's link-1 is ${JSON.stringify(own)}`);
      return { link: own };
    });

    await check('bob: stateless on the wire', async () => statelessWire(bob, 'bob'));
  } finally {
    await bob.client.close();
  }

  // No identity: `server/discover` is answered, a tool call is refused.
  await check(`no ${SCOPE_HEADER} header: a tool call is refused (HTTP 400), naming the header and initialize`, async () => {
    const anonymous = await connect(url, null, 'auto');
    try {
      const version = anonymous.client.getNegotiatedProtocolVersion?.();
      assert(version === undefined || version === STATELESS, `negotiated ${version}, not ${STATELESS}`);
      let result;
      try {
        result = await anonymous.client.callTool({
          name: 'links_create',
          arguments: { destination: 'https://nobody.example/', name: 'N' },
        });
      } catch (error) {
        const message = String(error?.message ?? error);
        assert(message.includes(SCOPE_HEADER), `the refusal does not name ${SCOPE_HEADER}: ${message}`);
        assert(message.includes('initialize'), `the refusal does not offer initialize: ${message}`);
        const refused = anonymous.log.filter((r) => r.method === 'tools/call');
        assert(
          refused.length > 0 && refused.every((r) => r.status === 400),
          `the tools/call answers were ${JSON.stringify(refused)}, not HTTP 400`,
        );
        return { error: error?.constructor?.name, code: error?.code, message };
      }
      throw new Error(`the call was served: ${JSON.stringify(result)}`);
    } finally {
      await anonymous.client.close();
    }
  });
}

try {
  await main();
} catch (error) {
  record('driver', false, String(error?.stack ?? error));
}
const failed = results.filter((ok) => !ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
