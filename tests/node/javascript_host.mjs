// A JavaScript MCP host's client side, played by the official TypeScript MCP
// SDK, driving the `ai-tools` gateway over stdio in front of a gRPC service
// that echoes what it received (integers.v1.IntegersService, see
// tests/proto/integers/v1/integers.proto). Run by cli/tests/javascript_host.rs:
//
//   node javascript_host.mjs -- AI-TOOLS mcp --grpc URL --proto FILE -I DIR \
//       --service integers.v1.IntegersService --stdio
//
// The gateway command is started once per session; this script appends
// `--host-profile NAME` where a session is for a named profile.
//
// What the host does to a model's tool call is what every JavaScript host
// does: the model's text goes through `JSON.parse`, whose numbers are
// doubles, and the parsed object through the SDK's `callTool`, which
// serializes it with `JSON.stringify`.
//
// What SDK 1.32.2 validates by itself: `listTools` and `callTool` check the
// response *shapes* against the protocol's zod schemas, and `callTool` checks
// `structuredContent` against a tool's `outputSchema` (the gateway declares
// none, so nothing there). It does NOT check a call's arguments against the
// tool's `inputSchema`. So each call's arguments are checked here against the
// listed `inputSchema` with the SDK's own `AjvJsonSchemaValidator` (ajv 8,
// the validator the Client uses for output schemas): a checker this project
// did not write confirms whether the arguments conform.
//
// Prints one JSON line per check ({"check", "ok", ...}) and then
// `N passed, M failed`; exits 1 when a check failed.

import { readFileSync } from 'node:fs';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

const SDK_VERSION = JSON.parse(
  readFileSync(
    new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url),
    'utf8',
  ),
).version;

const TOOL = 'integers_echo';

const SIGNED_PATTERN = '^(0|-?[1-9][0-9]*)$';
const UNSIGNED_PATTERN = '^(0|[1-9][0-9]*)$';
const SIGNED_FIELDS = ['signed', 'zigzag', 'sfixed'];
const UNSIGNED_FIELDS = ['unsigned', 'fixed'];

// The model's text, as a model that read the javascript-profile schema writes
// it: every 64-bit integer a string of digits, none of which a double holds
// (2^53+1, 2^64-1, 2^63-1, ...) except -2^63, whose digits
// `JSON.stringify` of a double would still change (-9223372036854776000).
// Trees past the first level are JSON-encoded strings, as the schema says.
const MODEL_TEXT = String.raw`{
  "label": "digits",
  "signed": "9007199254740993",
  "unsigned": "18446744073709551615",
  "zigzag": "-9223372036854775808",
  "fixed": "18446744073709551615",
  "sfixed": "-9223372036854775807",
  "many": ["9007199254740993", "-9007199254740995", "9223372036854775807"],
  "by_id": [
    {"key": "-9223372036854775808", "value": "lowest"},
    {"key": "9007199254740993", "value": "past 2^53"}
  ],
  "range": {"low": "-9007199254740993", "high": "9007199254740993"},
  "other_range": {"low": "1", "high": "9223372036854775806"},
  "tree": {"id": "9007199254740995", "children": ["{\"id\": \"9007199254740997\"}"]}
}`;

// What the service must echo back (protojson with the proto field names the
// arguments use, 64-bit integers as strings, map keys as strings).
const EXPECTED_ECHO = {
  label: 'digits',
  signed: '9007199254740993',
  unsigned: '18446744073709551615',
  zigzag: '-9223372036854775808',
  fixed: '18446744073709551615',
  sfixed: '-9223372036854775807',
  many: ['9007199254740993', '-9007199254740995', '9223372036854775807'],
  by_id: { '-9223372036854775808': 'lowest', '9007199254740993': 'past 2^53' },
  range: { low: '-9007199254740993', high: '9007199254740993' },
  other_range: { low: '1', high: '9223372036854775806' },
  tree: { id: '9007199254740995', children: [{ id: '9007199254740997' }] },
};

// The same call with the int64 written as a bare JSON number, as a model that
// ignores the schema might: `JSON.parse` makes it 9007199254740992.
const BARE_NUMBER_TEXT = '{"label": "bare number", "signed": 9007199254740993}';
// A bare number a double holds exactly.
const SMALL_NUMBER_TEXT = '{"label": "small number", "signed": 42, "unsigned": 9007199254740991}';
// The bare number through a gateway with `--host-profile exact`.
const EXACT_PROFILE_TEXT = '{"label": "exact profile", "signed": 9007199254740993}';

const results = [];

function record(check, ok, detail) {
  const line = { check, ok, ...detail };
  results.push(line);
  console.log(JSON.stringify(line));
}

/** Runs `body`; a thrown error or a returned `false` is a failed check. */
async function check(name, body) {
  try {
    const detail = await body();
    if (detail === false) {
      record(name, false, {});
    } else {
      record(name, true, detail && typeof detail === 'object' ? detail : {});
    }
  } catch (error) {
    record(name, false, { error: String(error?.stack ?? error) });
  }
}

function assert(condition, message) {
  if (!condition) {
    throw new Error(message);
  }
}

function deepEqual(a, b) {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value) {
  if (Array.isArray(value)) {
    return value.map(canonical);
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical(value[k])]),
    );
  }
  return value;
}

/** Every key named `$ref` or `$defs` anywhere in `value`. */
function refs(value, path = '$', found = []) {
  if (Array.isArray(value)) {
    value.forEach((v, i) => refs(v, `${path}[${i}]`, found));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' || k === '$defs') {
        found.push(`${path}.${k}`);
      }
      refs(v, `${path}.${k}`, found);
    }
  }
  return found;
}

function text(result) {
  return result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/** The echoed message: `structuredContent`, which must equal the text's JSON. */
function echoed(result) {
  assert(!result.isError, `the call failed: ${text(result)}`);
  const fromText = JSON.parse(text(result));
  assert(
    deepEqual(fromText, result.structuredContent),
    `structuredContent ${JSON.stringify(result.structuredContent)} differs from the text ${text(result)}`,
  );
  return result.structuredContent;
}

async function connect(gateway, profile) {
  const args = gateway.slice(1);
  if (profile) {
    args.push('--host-profile', profile);
  }
  const transport = new StdioClientTransport({ command: gateway[0], args, stderr: 'inherit' });
  const client = new Client({ name: 'ai-tools-javascript-host-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function listed(client) {
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === TOOL);
  assert(tool, `no tool ${TOOL} among ${tools.map((t) => t.name).join(', ')}`);
  return { tools, tool };
}

const validator = new AjvJsonSchemaValidator();

/** The SDK's ajv verdict on `args` against the tool's listed `inputSchema`. */
function conforms(tool, args) {
  return validator.getValidator(tool.inputSchema)(args);
}

async function main() {
  const dash = process.argv.indexOf('--');
  const gateway = dash < 0 ? [] : process.argv.slice(dash + 1);
  if (gateway.length === 0) {
    console.error('usage: node javascript_host.mjs -- AI-TOOLS mcp ... --stdio');
    process.exit(2);
  }
  record('sdk', true, { sdk: SDK_VERSION, node: process.version });

  // The default profile (no --host-profile), which is what users run.
  const client = await connect(gateway, null);
  let tool;
  let listing;
  await check('javascript profile: 64-bit integers listed as strings of digits, no $ref', async () => {
    ({ tools: listing, tool } = await listed(client));
    const props = tool.inputSchema.properties;
    const expectString = (schema, pattern, where) => {
      assert(schema?.type === 'string', `${where} is ${JSON.stringify(schema)}, not a string`);
      assert(schema.pattern === pattern, `${where} has pattern ${schema.pattern}, not ${pattern}`);
    };
    for (const f of SIGNED_FIELDS) expectString(props[f], SIGNED_PATTERN, f);
    for (const f of UNSIGNED_FIELDS) expectString(props[f], UNSIGNED_PATTERN, f);
    expectString(props.many?.items, SIGNED_PATTERN, 'many[]');
    expectString(props.range?.properties?.low, SIGNED_PATTERN, 'range.low');
    expectString(props.other_range?.properties?.high, SIGNED_PATTERN, 'other_range.high');
    expectString(props.tree?.properties?.id, SIGNED_PATTERN, 'tree.id');
    const mapKey = props.by_id?.items?.properties?.key ?? props.by_id?.propertyNames;
    expectString(mapKey, SIGNED_PATTERN, 'by_id key');
    const found = refs(listing);
    assert(found.length === 0, `the listing has ${found.join(', ')}`);
    return { signed: props.signed, unsigned: props.unsigned };
  });

  await check('javascript profile: `--host-profile javascript` lists the same as the default', async () => {
    const named = await connect(gateway, 'javascript');
    try {
      const { tools } = await listed(named);
      assert(deepEqual(tools, listing), 'the listings differ');
    } finally {
      await named.close();
    }
  });

  await check('javascript profile: digits survive JSON.parse and reach the service exactly', async () => {
    assert(tool, 'no listing');
    const args = JSON.parse(MODEL_TEXT);
    assert(args.signed === '9007199254740993', `JSON.parse gave ${args.signed}`);
    const verdict = conforms(tool, args);
    assert(verdict.valid, `the SDK's ajv refuses the arguments: ${verdict.errorMessage}`);
    const result = await client.callTool({ name: TOOL, arguments: args });
    const echo = echoed(result);
    assert(
      deepEqual(echo, EXPECTED_ECHO),
      `the service received ${JSON.stringify(echo)}, not ${JSON.stringify(EXPECTED_ECHO)}`,
    );
    return { ajv: 'valid', echoed: echo };
  });

  await check('javascript profile: a bare number past 2^53 is refused, not rounded', async () => {
    assert(tool, 'no listing');
    const args = JSON.parse(BARE_NUMBER_TEXT);
    // The host's loss, which nothing downstream can see in the number itself.
    assert(
      args.signed === 9007199254740992 && JSON.stringify(args.signed) === '9007199254740992',
      `JSON.parse gave ${args.signed}, not the rounded 9007199254740992`,
    );
    const verdict = conforms(tool, args);
    assert(!verdict.valid, 'the SDK\'s ajv accepts a number where the schema asks for a string');
    const result = await client.callTool({ name: TOOL, arguments: args });
    const message = text(result);
    assert(result.isError === true, `the call was not refused: ${message}`);
    assert(/string/i.test(message) && /digit/i.test(message), `the refusal does not ask for a string of digits: ${message}`);
    assert(message.includes('signed'), `the refusal does not name the field: ${message}`);
    return { ajv: verdict.errorMessage, refusal: message };
  });

  await check('javascript profile: a bare number a double holds passes unchanged', async () => {
    const args = JSON.parse(SMALL_NUMBER_TEXT);
    const result = await client.callTool({ name: TOOL, arguments: args });
    const echo = echoed(result);
    assert(
      echo.signed === '42' && echo.unsigned === '9007199254740991',
      `the service received ${JSON.stringify(echo)}`,
    );
    return { echoed: echo };
  });
  await client.close();

  // Negative control: the exact profile through the same host. Its schema
  // says integer, the host rounds the number, a schema checker cannot tell,
  // and the service receives the rounded value. The harness must see it.
  const exact = await connect(gateway, 'exact');
  try {
    let exactTool;
    await check('exact profile (control): 64-bit integers listed as JSON integers', async () => {
      ({ tool: exactTool } = await listed(exact));
      const signed = exactTool.inputSchema.properties.signed;
      assert(signed?.type === 'integer', `signed is ${JSON.stringify(signed)}`);
      return { signed, refs: refs(exactTool.inputSchema).length };
    });

    await check('exact profile (control): the bare number arrives rounded, which the harness detects', async () => {
      assert(exactTool, 'no listing');
      const args = JSON.parse(EXACT_PROFILE_TEXT);
      const verdict = conforms(exactTool, args);
      assert(verdict.valid, `the SDK's ajv refuses the rounded arguments: ${verdict.errorMessage}`);
      const result = await exact.callTool({ name: TOOL, arguments: args });
      const echo = echoed(result);
      assert(
        echo.signed !== '9007199254740993',
        'the exact value arrived: the harness would not see a rounding host',
      );
      assert(echo.signed === '9007199254740992', `the service received ${JSON.stringify(echo)}`);
      return { ajv: 'valid', sent: '9007199254740993', received: echo.signed };
    });
  } finally {
    await exact.close();
  }
}

try {
  await main();
} catch (error) {
  record('driver', false, { error: String(error?.stack ?? error) });
}
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
