"""Output-schema truth: every result of every corpus tool validates against
the `outputSchema` the gateway lists for it, checked by checkers this
project did not write.

The gateway is the real `ai-tools mcp --output-schemas --stdio` over the
corpus's descriptors, in front of a grpcio server built here from the same
descriptors. The server answers each call with a response drawn by
`hypothesis` from the method's response type (every field kind, the
extremes of each integer type, NaN and the infinities, enum numbers the type
does not name where the enum is open, well-known types, maps of every key
type, nested and recursive messages, UUIDs where a field is aliased; for a
server stream, zero to three messages).

The client is the official TypeScript MCP SDK (`tests/node/output_host.mjs`):
its `callTool` checks each result against the tool's `outputSchema` itself,
as every host built on it does, and refuses one without `structuredContent`.
Each accepted result's `structuredContent` is then validated here with
Python's `jsonschema` (Draft 2020-12, formats checked) against the same
schema. Every call must succeed: an error result, or a result either
checker refuses, is a failure. The bar is 100 %.

Arguments: each tool is called with the smallest arguments its
`inputSchema` allows (required properties only). An alias argument
(`link-1`) is one the gateway issued for an earlier result, so tools that
take one are called after the tools whose results give one out.

Usage: python harness.py --ai-tools BIN --descriptor-set FILE
[--overlay FILE] [--draws N] [--only TOOL] [--host-profile javascript|exact]
(the gateway's: the JavaScript one, the default, lists schemas without
`$ref`, recursion cut; the exact one shares types through `$defs`); prints
one line per tool and a summary; exits 1 on any failure.
"""

import argparse
import json
import re
import subprocess
import sys
import threading
import uuid
from concurrent import futures

import grpc
import hypothesis
import jsonschema
from google.protobuf import descriptor, descriptor_pb2, descriptor_pool, json_format
from google.protobuf import message_factory
from hypothesis import strategies as st

NODE_SCRIPT = "output_host.mjs"

# Strings that are ids: a fixed set, so that aliases repeat within the
# conversation's limits rather than piling up.
UUIDS = [str(uuid.UUID(int=(0x5EED << 64) + i, version=4)) for i in range(16)]

INT32 = (-(2**31), 2**31 - 1)
UINT32 = (0, 2**32 - 1)
INT64 = (-(2**63), 2**63 - 1)
UINT64 = (0, 2**64 - 1)

# How deep drawn messages nest (a recursive type stops growing there).
MAX_DEPTH = 3
# Elements of a drawn list or map.
MAX_ITEMS = 3

FD = descriptor.FieldDescriptor


class HarnessError(Exception):
    pass


# ------------------------------------------------------------ descriptors


def load_pool(path):
    pool = descriptor_pool.DescriptorPool()
    with open(path, "rb") as f:
        fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    for fdp in fds.file:
        pool.Add(fdp)
    return pool


def methods_of(pool, fds_path):
    """Every method of every service in the set: path -> (method, streaming)."""
    with open(fds_path, "rb") as f:
        fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    methods = {}
    for fdp in fds.file:
        for service in fdp.service:
            full = (fdp.package + "." if fdp.package else "") + service.name
            sd = pool.FindServiceByName(full)
            for md in sd.methods:
                methods[f"/{full}/{md.name}"] = md
    return methods


def is_map(f):
    return f.is_repeated and f.type == FD.TYPE_MESSAGE and f.message_type.GetOptions().map_entry


def is_repeated(f):
    return f.is_repeated


def real_oneof(f):
    oneof = f.containing_oneof
    # A proto3 `optional` field sits alone in a synthetic oneof named `_field`.
    if oneof is None or (len(oneof.fields) == 1 and oneof.name == "_" + f.name):
        return None
    return oneof


def enum_is_open(enum):
    closed = getattr(enum, "is_closed", None)
    if closed is None:
        return enum.file.syntax == "proto3"
    return not closed


# ------------------------------------------------------------ responses


def integers(bounds, extra=()):
    lo, hi = bounds
    edges = sorted({lo, hi, 0, 1, *[x for x in extra if lo <= x <= hi]})
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi))


def scalar(f_type, enum=None):
    if f_type in (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32):
        return integers(INT32, [-1])
    if f_type in (FD.TYPE_UINT32, FD.TYPE_FIXED32):
        return integers(UINT32)
    if f_type in (FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64):
        return integers(INT64, [-1, 2**53 + 1, -(2**53) - 1])
    if f_type in (FD.TYPE_UINT64, FD.TYPE_FIXED64):
        return integers(UINT64, [2**53 + 1])
    if f_type == FD.TYPE_BOOL:
        return st.booleans()
    if f_type == FD.TYPE_STRING:
        return st.one_of(st.sampled_from(UUIDS), st.text(max_size=6))
    if f_type == FD.TYPE_BYTES:
        return st.binary(max_size=7)
    if f_type == FD.TYPE_FLOAT:
        return st.floats(width=32)
    if f_type == FD.TYPE_DOUBLE:
        return st.floats()
    if f_type == FD.TYPE_ENUM:
        named = st.sampled_from([v.number for v in enum.values])
        if enum_is_open(enum):
            return st.one_of(named, integers(INT32))
        return named
    raise HarnessError(f"no strategy for field type {f_type}")


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)

FIELD_PATH = st.from_regex(r"[a-z]{1,3}(_[a-z]{1,3})?(\.[a-z]{1,3})?", fullmatch=True)


class Responses:
    """Draws messages of any type of the pool."""

    def __init__(self, pool):
        self.pool = pool
        self.classes = {}
        self.any_payloads = ["google.protobuf.Duration", "google.protobuf.Timestamp"]

    def cls(self, md):
        if md.full_name not in self.classes:
            self.classes[md.full_name] = message_factory.GetMessageClass(md)
        return self.classes[md.full_name]

    def message(self, data, md, depth=0):
        msg = self.cls(md)()
        self.fill(data, msg, depth)
        return msg

    def fill(self, data, msg, depth):
        md = msg.DESCRIPTOR
        if md.full_name.startswith("google.protobuf.") and self.well_known(data, msg, depth):
            return
        chosen = {}
        for oneof in md.oneofs:
            members = [f for f in oneof.fields if real_oneof(f) is not None]
            if members:
                chosen[oneof.full_name] = data.draw(st.sampled_from([None, *members]))
        for f in md.fields:
            oneof = real_oneof(f)
            if oneof is not None:
                if chosen.get(oneof.full_name) is not f:
                    continue
            elif not is_repeated(f) and not data.draw(st.booleans()):
                continue
            self.field(data, msg, f, depth)

    def field(self, data, msg, f, depth):
        deeper = depth < MAX_DEPTH
        if is_map(f):
            key_f = f.message_type.fields_by_name["key"]
            value_f = f.message_type.fields_by_name["value"]
            target = getattr(msg, f.name)
            for _ in range(data.draw(st.integers(0, MAX_ITEMS if deeper else 0))):
                key = data.draw(scalar(key_f.type))
                if value_f.type == FD.TYPE_MESSAGE:
                    self.fill(data, target[key], depth + 1)
                else:
                    target[key] = data.draw(scalar(value_f.type, value_f.enum_type))
            return
        if is_repeated(f):
            target = getattr(msg, f.name)
            most = MAX_ITEMS if (deeper or f.type != FD.TYPE_MESSAGE) else 0
            for _ in range(data.draw(st.integers(0, most))):
                if f.type == FD.TYPE_MESSAGE:
                    self.fill(data, target.add(), depth + 1)
                else:
                    target.append(data.draw(scalar(f.type, f.enum_type)))
            return
        if f.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
            if not deeper:
                return
            target = getattr(msg, f.name)
            target.SetInParent()
            self.fill(data, target, depth + 1)
            return
        setattr(msg, f.name, data.draw(scalar(f.type, f.enum_type)))

    def well_known(self, data, msg, depth):
        """Fills a well-known type within protojson's ranges; False for a
        type that is not one."""
        name = msg.DESCRIPTOR.full_name
        if name == "google.protobuf.Timestamp":
            msg.seconds = data.draw(integers((-62135596800, 253402300799)))
            msg.nanos = data.draw(integers((0, 999_999_999)))
        elif name == "google.protobuf.Duration":
            msg.seconds = data.draw(integers((-315576000000, 315576000000)))
            if msg.seconds > 0:
                msg.nanos = data.draw(integers((0, 999_999_999)))
            elif msg.seconds < 0:
                msg.nanos = data.draw(integers((-999_999_999, 0)))
            else:
                msg.nanos = data.draw(integers((-999_999_999, 999_999_999)))
        elif name == "google.protobuf.FieldMask":
            msg.paths.extend(data.draw(st.lists(FIELD_PATH, max_size=3)))
        elif name == "google.protobuf.Struct":
            json_format.ParseDict(
                data.draw(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=3)), msg
            )
        elif name == "google.protobuf.Value":
            json_format.ParseDict(data.draw(JSON_VALUES), msg)
        elif name == "google.protobuf.ListValue":
            json_format.ParseDict(data.draw(st.lists(JSON_VALUES, max_size=3)), msg)
        elif name == "google.protobuf.Any":
            payload = self.pool.FindMessageTypeByName(data.draw(st.sampled_from(self.any_payloads)))
            msg.Pack(self.message(data, payload, depth + 1))
        elif name == "google.protobuf.Empty":
            pass
        elif name.endswith("Value") and "value" in msg.DESCRIPTOR.fields_by_name:
            f = msg.DESCRIPTOR.fields_by_name["value"]
            msg.value = data.draw(scalar(f.type))
        else:
            return False
        return True


# ------------------------------------------------------------ backend


class Backend(grpc.GenericRpcHandler):
    """Answers every method of the set with the responses queued for it."""

    def __init__(self, methods):
        self.methods = methods
        self.queued = None
        self.lock = threading.Lock()
        self.last = None

    def queue(self, encoded):
        with self.lock:
            self.queued = list(encoded)

    def take(self, path, context):
        """The queued responses; with none queued (a probe), records the
        method and fails the call."""
        with self.lock:
            self.last = path
            queued, self.queued = self.queued, None
        if queued is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "a probe: no response queued")
        return queued

    def service(self, details):
        md = self.methods.get(details.method)
        if md is None:
            return None
        if md.server_streaming:
            def stream(_request, context):
                yield from self.take(details.method, context)

            return grpc.unary_stream_rpc_method_handler(stream)

        def unary(_request, context):
            return self.take(details.method, context)[0]

        return grpc.unary_unary_rpc_method_handler(unary)


# ------------------------------------------------------------ arguments


# A message of the corpus with no required field, as an Any's payload.
ANY_TYPE_URL = "type.googleapis.com/links.v1.Link"

ALIAS_IN_DESCRIPTION = re.compile(r"An alias like `([A-Za-z0-9_]+)-1`")


def minimal(node, what, defs=None):
    """The smallest value `node` (a listed inputSchema node, whose root's
    `$defs` are `defs`) accepts."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if defs is None or name not in defs:
            raise HarnessError(f"{what}: unresolved {node['$ref']}")
        return minimal(defs[name], what, defs)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in node:
            # `null` where it is allowed: a strict rendering's way of leaving out.
            if any(b.get("type") == "null" for b in node[key]):
                return None
            return minimal(node[key][0], what, defs)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = "null" if "null" in kind else kind[0]
    if kind == "object" or (kind is None and "properties" in node):
        props = node.get("properties", {})
        return {
            # A `google.protobuf.Any` needs a type the server's pool knows.
            name: ANY_TYPE_URL if name == "@type" else minimal(props[name], f"{what}.{name}", defs)
            for name in node.get("required", [])
        }
    if kind == "array":
        return [
            minimal(node.get("items", {}), f"{what}[]", defs) for _ in range(node.get("minItems", 0))
        ]
    if kind == "string":
        alias = ALIAS_IN_DESCRIPTION.search(node.get("description", ""))
        if alias:
            return f"{alias.group(1)}-1"
        pattern = node.get("pattern")
        if node.get("format") == "date-time":
            return "2024-01-01T00:00:00Z"
        if pattern:
            return hypothesis.find(st.from_regex(pattern, fullmatch=True), lambda s: True)
        description = node.get("description", "")
        if "JSON-encoded" in description:
            return json.dumps({"@type": ANY_TYPE_URL} if "google.protobuf.Any" in description else {})
        return "x" * max(1, node.get("minLength", 1))
    if kind in ("integer", "number"):
        lo = node.get("minimum", 0)
        hi = node.get("maximum", lo)
        return max(lo, min(0, hi))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    raise HarnessError(f"{what}: no minimal value for {json.dumps(node)[:200]}")


# ------------------------------------------------------------ the host


class Host:
    def __init__(self, node_dir, gateway):
        self.proc = subprocess.Popen(
            ["node", NODE_SCRIPT, "--", *gateway],
            cwd=node_dir,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        first = self.proc.stdout.readline()
        if not first:
            raise HarnessError(f"the host ended before listing tools (exit {self.proc.wait()})")
        self.tools = {t["name"]: t for t in json.loads(first)["tools"]}

    def call(self, tool, arguments):
        self.proc.stdin.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise HarnessError(f"the host ended (exit {self.proc.poll()})")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


# ------------------------------------------------------------ harness


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ai-tools", required=True)
    parser.add_argument("--descriptor-set", required=True)
    parser.add_argument("--overlay", action="append", default=[])
    parser.add_argument("--node-dir", required=True)
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--only")
    parser.add_argument("--host-profile", choices=["javascript", "exact"], default="javascript")
    args = parser.parse_args()

    pool = load_pool(args.descriptor_set)
    methods = methods_of(pool, args.descriptor_set)
    backend = Backend(methods)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((backend,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()

    gateway = [
        args.ai_tools, "mcp", "--grpc", f"http://127.0.0.1:{port}",
        "--descriptor-set", args.descriptor_set, "--stdio",
        "--output-schemas", "--max-output-schema-bytes", str(1 << 30),
    ]
    for overlay in args.overlay:
        gateway += ["--overlay", overlay]
    gateway += ["--host-profile", args.host_profile]
    # Every tool is called, the destructive ones too, by a host that cannot
    # ask a person: consent is not what is tested here.
    gateway += ["--confirm", "none"]
    host = Host(args.node_dir, gateway)
    responses = Responses(pool)
    failures = []

    tools = sorted(host.tools.values(), key=lambda t: t["name"])
    if args.only:
        tools = [t for t in tools if t["name"] == args.only]
    unlisted = [t["name"] for t in tools if "outputSchema" not in t]

    checked = [0]

    def run(tool, md, arguments):
        name = tool["name"]
        validator = jsonschema.Draft202012Validator(
            tool["outputSchema"], format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
        problems = []
        calls = [0]

        @hypothesis.settings(
            max_examples=args.draws,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(hypothesis.HealthCheck),
            phases=[hypothesis.Phase.generate],
        )
        @hypothesis.given(st.data())
        def one_call(data):
            count = data.draw(st.integers(0, MAX_ITEMS)) if md.server_streaming else 1
            drawn = [responses.message(data, md.output_type) for _ in range(count)]
            backend.queue(m.SerializeToString() for m in drawn)
            answer = host.call(name, arguments)
            calls[0] += 1
            if not answer["ok"]:
                problems.append(f"the SDK refused the result: {answer['error'][:500]}")
                return
            result = answer["result"]
            if result.get("isError"):
                text = result["content"][0].get("text", "") if result.get("content") else ""
                problems.append(f"an error result: {text[:500]}")
                return
            for error in validator.iter_errors(result["structuredContent"]):
                problems.append(
                    f"jsonschema: {error.message[:300]} at {list(error.absolute_path)}"
                )

        one_call()
        checked[0] += calls[0]
        status = "ok" if not problems else f"{len(problems)} FAILED"
        print(f"{name}: {calls[0]} results, {status}", flush=True)
        for problem in problems[:5]:
            failures.append((name, problem))

    def probe(tool, arguments):
        """The method a call of `tool` reaches, or the error that stopped it
        before (an alias not given out yet)."""
        backend.last = None
        answer = host.call(tool["name"], arguments)
        if backend.last is not None:
            return methods[backend.last], None
        return None, json.dumps(answer)[:500]

    pending = []
    for tool in tools:
        if "outputSchema" not in tool:
            continue
        # The JavaScript profile (the default) promises hosts that refuse
        # `$ref` none; the exact one shares types through `$defs`.
        if args.host_profile == "javascript" and "$ref" in json.dumps(tool["outputSchema"]):
            failures.append((tool["name"], "the outputSchema holds a $ref"))
        try:
            schema = tool["inputSchema"]
            arguments = minimal(schema, tool["name"], schema.get("$defs", {}))
        except HarnessError as e:
            failures.append((tool["name"], str(e)))
            continue
        pending.append((tool, arguments))

    # Tools whose arguments hold an alias run once the others gave one out.
    def takes_alias(item):
        return bool(re.search(r'"[A-Za-z0-9_]+-1"', json.dumps(item[1])))

    pending.sort(key=takes_alias)
    runs = []

    def probe_and_run(tool, arguments):
        md, why = probe(tool, arguments)
        if md is not None:
            runs.append(tool["name"])
            run(tool, md, arguments)
        return why

    deferred = [item for item in pending if probe_and_run(*item) is not None]
    for tool, arguments in deferred:
        why = probe_and_run(tool, arguments)
        if why is not None:
            failures.append((tool["name"], f"the call never reached the server: {why}"))

    host.close()
    server.stop(None)
    print(f"tools without an outputSchema: {', '.join(unlisted) if unlisted else 'none'}")
    print(f"{checked[0]} results of {len(runs)} tools checked by the TypeScript SDK and jsonschema")
    for name, problem in failures:
        print(f"FAIL {name}: {problem}")
    print(f"{len(failures)} failures")
    print(json.dumps({"tools": len(runs), "results": checked[0], "failures": len(failures),
                      "unlisted": unlisted}))
    return 1 if failures else 0



if __name__ == "__main__":
    try:
        sys.exit(main())
    except HarnessError as e:
        print(f"harness error: {e}", file=sys.stderr)
        sys.exit(2)
