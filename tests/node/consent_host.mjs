// Hosts built on the official TypeScript MCP SDKs answering the gateway's
// consent questions. Run by cli/tests/consent.rs against `ai-tools mcp ...
// --http 127.0.0.1:0 --alias-scope-header x-principal` in front of the
// links service:
//
//   node consent_host.mjs http://127.0.0.1:PORT/mcp accept|decline|cancel
//
// Two hosts, each declaring elicitation and answering every question with
// MODE (accept checks the form's `confirm` box):
// - the handshake era (2025-11-25), `@modelcontextprotocol/sdk`: the server
//   sends `elicitation/create` during the call;
// - the stateless era (2026-07-28), `@modelcontextprotocol/client`: the call
//   returns the question with a signed `requestState`, and the client calls
//   again with the answer.
// Each creates a link and a workflow step and deletes the step (a
// destructive tool). Prints one JSON object: for each host, the delete's
// `isError` and text, and the messages it was asked.

import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, mode] = process.argv.slice(2);
const SCOPE_HEADER = 'x-principal';

function answer(asked) {
  return async (request) => {
    asked.push(request.params.message);
    return mode === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: mode };
  };
}

function text(result) {
  return (result.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

async function deleteAStep(client) {
  const link = await client.callTool({ name: 'links_create', arguments: { destination: 'https://example.com/ts' } });
  const linkId = JSON.parse(text(link)).link.id;
  const step = await client.callTool({
    name: 'workflow_steps_create',
    arguments: { link_id: linkId, action: 'ACTION_EMAIL' },
  });
  const stepId = JSON.parse(text(step)).step.id;
  const deleted = await client.callTool({ name: 'workflow_steps_delete', arguments: { step_id: stepId } });
  return { isError: Boolean(deleted.isError), text: text(deleted) };
}

const out = {};

{
  const asked = [];
  const client = new Client({ name: 'ai-tools-consent-host', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, answer(asked));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { [SCOPE_HEADER]: 'handshake' } } }),
  );
  out.handshake = { protocol: client.transport?.protocolVersion ?? null, delete: await deleteAStep(client), asked };
  await client.close();
}

{
  const asked = [];
  const client = new ModernClient(
    { name: 'ai-tools-consent-host', version: '1.0.0' },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  client.setRequestHandler('elicitation/create', answer(asked));
  await client.connect(new ModernTransport(new URL(url), { requestInit: { headers: { [SCOPE_HEADER]: 'stateless' } } }));
  out.stateless = {
    protocol: client.getNegotiatedProtocolVersion?.() ?? null,
    delete: await deleteAStep(client),
    asked,
  };
  await client.close();
}

console.log(JSON.stringify(out));
