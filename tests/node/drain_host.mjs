// Hosts built on the official TypeScript MCP SDKs calling a gateway while
// it drains. Run by cli/tests/admin.rs against `ai-tools mcp ... --http
// 127.0.0.1:0 --alias-scope-header x-principal` in front of a service that
// holds the calls named `hold:cN`:
//
//   node drain_host.mjs http://127.0.0.1:PORT/mcp
//
// Two hosts, one for each era: `@modelcontextprotocol/sdk` in a session
// (2025-11-25) and `@modelcontextprotocol/client` stateless (2026-07-28).
// Each lists the tools and starts `links_create` named `hold:c1` (the
// handshake host) or `hold:c2` (the stateless one); then `started` is
// printed. Once a line comes on stdin (the gateway has been told to stop),
// each calls `links_create` again (`c3`, `c4`) and waits for its first
// call. Prints one JSON object: for each host, each call's `isError` and
// text, or the error the SDK threw (`error`).

import { createInterface } from 'node:readline';

import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url] = process.argv.slice(2);
const SCOPE_HEADER = 'x-principal';

function text(result) {
  return (result.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

async function outcome(call) {
  try {
    const result = await call;
    return { isError: Boolean(result.isError), text: text(result) };
  } catch (e) {
    return { error: `${e?.name ?? 'Error'}: ${e?.message ?? e}` };
  }
}

function create(client, name) {
  return client.callTool({ name: 'links_create', arguments: { destination: `https://example.com/${name}`, name } });
}

const handshake = new Client({ name: 'ai-tools-drain-host', version: '1.0.0' });
await handshake.connect(
  new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { [SCOPE_HEADER]: 'handshake' } } }),
);
const stateless = new ModernClient(
  { name: 'ai-tools-drain-host', version: '1.0.0' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
await stateless.connect(new ModernTransport(new URL(url), { requestInit: { headers: { [SCOPE_HEADER]: 'stateless' } } }));
await handshake.listTools();
await stateless.listTools();

const held = { handshake: outcome(create(handshake, 'hold:c1')), stateless: outcome(create(stateless, 'hold:c2')) };
console.log('started');
await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
const late = { handshake: await outcome(create(handshake, 'c3')), stateless: await outcome(create(stateless, 'c4')) };
const out = {};
for (const era of ['handshake', 'stateless']) {
  out[era] = { during_drain: late[era], in_flight: await held[era] };
}
console.log(JSON.stringify(out));
// The gateway is gone by now: closing may fail, which is not the test's.
await Promise.allSettled([handshake.close(), stateless.close()]);
process.exit(0);
