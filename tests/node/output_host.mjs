// A JavaScript MCP host's client, played by the official TypeScript MCP SDK,
// driven line by line by tests/output/harness.py (run by
// cli/tests/output_schemas.rs):
//
//   node output_host.mjs -- AI-TOOLS mcp ... --output-schemas --stdio
//
// It starts the gateway over stdio, lists the tools and prints
// `{"tools": [...]}` (the list as the SDK parsed it). Then, for each JSON line
// `{"tool": NAME, "arguments": {...}}` on stdin, it calls the tool with the
// SDK's `callTool` and prints one line:
//
//   {"ok": true, "result": CallToolResult}       the SDK accepted the result
//   {"ok": false, "error": "..."}                the SDK refused it
//
// `callTool` itself checks a result against the tool's `outputSchema` (SDK
// 1.32.2: `cacheToolMetadata` compiles each listed `outputSchema` with its
// `AjvJsonSchemaValidator`, ajv 8 with ajv-formats; a result without
// `structuredContent`, or one that does not validate, is an `McpError`).
// Nothing here validates: the SDK does, as every host built on it does.

import { createInterface } from 'node:readline';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const separator = process.argv.indexOf('--');
if (separator < 0 || separator + 1 >= process.argv.length) {
  console.error('usage: node output_host.mjs -- AI-TOOLS mcp ... --stdio');
  process.exit(2);
}
const [command, ...args] = process.argv.slice(separator + 1);

const client = new Client({ name: 'ai-tools-output-host', version: '1.0.0' });
const transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
await client.connect(transport);

const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);
console.log(JSON.stringify({ tools }));

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) {
    continue;
  }
  const { tool, arguments: toolArguments } = JSON.parse(line);
  try {
    const result = await client.callTool({ name: tool, arguments: toolArguments });
    console.log(JSON.stringify({ ok: true, result }));
  } catch (error) {
    console.log(JSON.stringify({ ok: false, error: String(error?.message ?? error) }));
  }
}
await client.close();
