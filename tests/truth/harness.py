"""Schema truth: an independent check that every tool rendering is sound.

Soundness: every argument set valid under a tool's rendered parameters is
accepted by the executor and reaches the server as the message it means.
Completeness: every enum value, oneof member, map key type and well-known
type field of the corpus can be used under every rendering, and every
64-bit integer field carries the values a double cannot hold exactly.

The arguments are drawn by `hypothesis-jsonschema` (a generator this project
did not write) from each rendering, validated by `jsonschema` (Draft 2020-12),
sent through the real executor (`schema_truth exec`, over gRPC) to a grpcio
server built here from the descriptors, and compared, as protobuf messages,
with what the arguments mean, computed here in Python from the descriptors
with `google.protobuf.json_format` (not with this project's Rust code).

Usage: python harness.py path/to/schema_truth [--draws N] [--only TOOL]
[--max-tool-bytes N] [--verbose]; with `--max-tool-bytes`, the renderings
are cut to that size budget (`render::parameters_within`), only the tools it
cut are run, and the bar is soundness alone (completeness through the cuts
is reported); exits non-zero on any failure: the bar is 100 %. Needs `node`
(Node.js) on the PATH, for the JavaScript host (see Transport); without it
the harness stops with a message saying so.

Targets (twelve per tool): `openai_strict`, `openai`, `anthropic`,
`anthropic_strict`, `gemini_json_schema`, and `gemini` (the OpenAPI-subset
`parameters`, translated to JSON Schema as in step b), each rendered for a
client that changes nothing (host profile `exact`: `render::parameters`),
and the same six rendered for a JavaScript host (`openai@javascript`, …:
`render::parameters_for(.., HostProfile::JavaScript)`, 64-bit integers as
strings of digits, no `$ref`). A rendering for a host that refuses `$ref`
holding a `$ref` or `$defs` anywhere is a soundness failure.

Preparing a schema for drawing. Each step keeps the rendering's meaning or
narrows it (a narrowed schema only drops valid values, so every draw is still
valid under the rendering; every draw is also validated against the
rendering itself):

a. Recursion. `$ref`s into `$defs` are inlined, each definition at most
   `UNROLL` (2) times on one path, as the renderer itself unrolls for the
   dialects without `$ref`. Past that, the reference is cut away by
   narrowing: an optional property is dropped, a `{"type": "null"}`
   alternative is kept instead of the reference, an array gets
   `maxItems: 0`, a map `maxProperties: 0`; a required reference passes the
   cut to its parent (reaching the root would stop the harness: it never
   happens in the corpus, so the dialect's own JSON-string cut is never
   needed as a substitute).
b. Gemini `parameters` (OpenAPI 3.0 subset) to JSON Schema: `nullable: true`
   becomes an `anyOf` with a `{"type": "null"}` branch; type names are
   lowercased; every object gets `additionalProperties: false` (Gemini only
   produces declared properties); OpenAPI-only annotations (`example`,
   `propertyOrdering`, `format: enum`) are dropped.
c. Patterns follow ECMA-262, where `$` matches only at the very end and `\\d`,
   `\\w` are ASCII; Python's `re` also matches `$` before a final newline and
   `\\d` on any Unicode digit. A trailing `$` becomes `\\Z`, `\\d` becomes
   `[0-9]` and `\\w` `[A-Za-z0-9_]`, for drawing and validating.
d. Constraints a dialect states only in prose become formal constraints:
   "An integer of at least X." / "of at most Y." / "An integer from X to
   Y." (and "A number …"; Anthropic strict) give `minimum`/`maximum`;
   "An integer from X to Y, as a string of digits." (and "of at least X",
   "of at most Y", or no range: a 64-bit integer where numbers pass through
   doubles) on a string gives a `pattern` matching exactly the decimal
   strings of the integers in that range (no leading zeros, no `-0`), in
   place of the rendering's own pattern, which admits any length (and so
   out-of-range strings, which the executor refuses: a model that read the
   description stays within the range, and so do the draws); "Must
   match the regular expression `…`." a `pattern`; "Base64-encoded bytes."
   a base64 pattern (and "Base64 (standard or URL-safe alphabet, padded or
   not)." one for either alphabet); "A duration in seconds with an `s`
   suffix" protojson's duration form with the digit limits the sentence
   states ("at most 11 digits, then at most 9 after a point"), else at most
   11 digits of seconds (within its range) and 9 of fraction; "Comma-separated
   field paths in lowerCamelCase" a field-mask pattern; "An RFC 3339
   date-time" and "Format: `f`." a `format`. A string that stands for a cut
   message or map ("A JSON-encoded `pkg.Msg` object.", "A JSON-encoded
   object.", "A JSON-encoded object mapping keys to values.") becomes an
   `enum` of 8 JSON texts drawn from the canonical rendering of that type;
   the string branch of a `google.protobuf.Value` that cannot be an open
   object ("Any JSON value: …; an object or array as its JSON text.") also
   draws from 8 such texts. The texts come from the node of that message
   (or map field, or `Value`) in the prepared canonical rendering,
   located by descriptor (a `$defs[pkg.Msg]` is inlined there, so it is
   covered), else the text `{}`; for a target whose numbers pass through
   doubles (Gemini, JavaScript hosts), with every 64-bit integer there as a
   string of digits of its range, as that rendering writes the message (a
   cut's content is "shaped as" a node of the rendering). Each node
   that needed such a sentence is counted per dialect (the summary's
   "prose-only" counts: how much of the contract lives only in prose). A
   sentence whose constraint the node already states formally is not
   counted. The description of an `anyOf` applies to its branches.
e. What no schema states: a field that carries an alias prefix (the tool's
   `request_aliases`, matched by message and field through the descriptors)
   gets an `enum` of the aliases the conversation knows; a
   `google.protobuf.Any` gets concrete values whose `@type` names a type the
   pool knows (a `Duration` with a valid `value`, and a scalar-only message
   of the corpus with its fields, its 64-bit integers as strings of digits
   for a target whose numbers pass through doubles). That `Any` is the one
   place where the schema cannot state validity.
f. Sizes, for run time (narrowing): arrays hold at most 3 items, maps at
   most 3 entries, and free JSON (`Struct` fields, `Value`) is nested at
   most 2 levels.

Identical prepared schemas (a strict twin of a tool; dialects that render
alike; a host rendering like its dialect's) are drawn once, and pinned once
per usage (completeness), and sent for each tool and rendering. Strategies are
memoized per subschema (see `_memoize_strategies`); prepared schemas are
never changed after they are drawn from.

Formats are assertions where providers enforce them (`date-time`, checked
here against RFC 3339 with the standard library). The OpenAPI format `byte`
is not a JSON Schema format and is treated as the annotation it is there;
the base64 `pattern` (or the prose, step d) is what constrains bytes.

Transport: each draw reaches the executor as the target's provider and
host hand it over; the intent is still computed from the draw itself, what
the model wrote, written by Python's `json.dumps` (an int past 2^53 as its
exact digits). The Gemini API hands a function call's arguments back as a
`google.protobuf.Struct`, whose numbers are doubles, so for the Gemini
targets each draw goes through one (`json_format.ParseDict` into a
`Struct`, then `MessageToDict`: every number a double, an integer past 2^53
rounded). A JavaScript host parses the arguments with `JSON.parse` and
writes them on with `JSON.stringify`, so for every `@javascript` target the
draw's JSON text goes through a real one: a long-lived `node` running
`javascript_host.js` (one text per line in, `JSON.stringify(JSON.parse(
text))` out). A Gemini `@javascript` target gets both, in the order of a
Gemini model in a JavaScript host (Gemini CLI): the `Struct`, then
`JSON.parse`. The exec mode is told the host profile, as an MCP server of
that profile tells the executor (`CallOptions::through_host`): with a host
that parses numbers as doubles it refuses an integer sent as a JSON number
past 2^53 as possibly rounded.

Intent: what the arguments mean, computed from the descriptors: `null`
means absent, except on a singular `google.protobuf.Value` rendered as any
JSON value, where it is the NullValue (protojson; the schema has no other
null there; where the Value is cut to a JSON string, `null` is absent and
the text `null` the NullValue); a map sent as `[{key, value}, ...]` is that map (a repeated key: the last one wins, as
in protobuf); a string where the field is a message, `Struct`, `ListValue`,
`Any` or map holds that JSON (for a `Value`, only where the rendering cut it
to a JSON string: elsewhere a string is a string value); a property named
after a oneof holds `{"member": value}` (exactly one member) and sets that
member; protojson's flat form (`{"member": value}` directly) is valid too;
field names may be proto names or lowerCamelCase JSON names; an alias means
the UUID behind it. The result is parsed with `json_format.ParseDict` into
the request message and compared, as a message, with what the server got.
A failure to parse is a failure of the rendering: it admitted arguments that
mean no message.

Completeness (second phase): the prepared canonical rendering is walked with
the descriptors to list every enum value (except a zero value named
`*_UNSPECIFIED`), every member of every (non-synthetic) oneof, every map key
type (per map field), every well-known-type field, and, for every 64-bit
integer (int64, uint64, sint64, fixed64, sfixed64, their wrappers
`Int64Value`/`UInt64Value`, and 64-bit map keys), the values at and past
±2^53 and the type's extremes (signed: 2^53-1, 2^53, 2^53+1, -2^53-1,
INT64_MIN, INT64_MAX; unsigned: 2^53+1, UINT64_MAX, 0; those within the
range the canonical rendering states), each at its shallowest path, once
per request message. For each, under every rendering,
a copy of the prepared schema is pinned: the path to the node made required
and non-null, arrays and maps on it non-empty, the enum reduced to the
value, the oneof to the member's branch (or, in the flat form, the other
members dropped), a 64-bit integer to the value in the form the rendering
gives it (a string of digits on a string node, a JSON integer on an integer
node); off the path, optional properties are dropped and nullable
required ones set to null (narrowing, so the draw is small). Where the path
crosses a JSON-string cut, the rest of it is pinned in the cut's content.
One example is drawn (the generator's first, its simplest), validated
against the unpinned rendering, sent (through the target's transport), and
must be accepted, arrive as intended (a 64-bit value exactly: compared as
messages), and carry the usage.
"""

import argparse
import base64
import copy
import datetime
import json
import os
import queue
import shutil
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent import futures

import grpc
import jsonschema
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

# Imported so that the default pool holds the well-known types with their
# JSON mixins before the corpus files are added.
from google.protobuf import (  # noqa: F401
    any_pb2,
    descriptor,
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    json_format,
    message_factory,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
)

DIALECT_TARGETS = [
    "openai_strict",
    "openai",
    "anthropic",
    "anthropic_strict",
    "gemini_json_schema",
    "gemini",
]
# Host profiles other than `exact` (a client that changes nothing, the
# dialect targets' own): each dialect target again, as `target@host`.
HOSTS = ["javascript"]
TARGETS = DIALECT_TARGETS + [f"{t}@{h}" for h in HOSTS for t in DIALECT_TARGETS]
# Dialects whose provider returns a call's arguments as a `Struct` (doubles).
STRUCT_TRANSPORT = {"gemini_json_schema", "gemini"}
# Hosts that pass the arguments through `JSON.parse`/`JSON.stringify`.
JAVASCRIPT_HOSTS = {"javascript"}
# Hosts that refuse `$ref`/`$defs`: their renderings must hold none.
REFLESS_HOSTS = {"javascript"}
NODE_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "javascript_host.js")
UNROLL = 2
MAX_ITEMS = 3
CONTENT_DRAWS = 8
FD = descriptor.FieldDescriptor
WKT_PACKAGE = "google.protobuf."
ANY = "google.protobuf.Any"
VALUE = "google.protobuf.Value"
LIST_VALUE = "google.protobuf.ListValue"
STRUCT = "google.protobuf.Struct"
EMPTY = "google.protobuf.Empty"
# The wrappers of a 64-bit integer: (signed, unsigned).
INT64_WRAPPERS = {"google.protobuf.Int64Value": False, "google.protobuf.UInt64Value": True}
# Completeness: the 64-bit values every 64-bit integer field must carry
# exactly (at and past ±2^53, where a double stops holding every integer,
# and the type's extremes).
SIGNED_64_VALUES = [2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1, -(2**63), 2**63 - 1]
UNSIGNED_64_VALUES = [2**53 + 1, 2**64 - 1, 0]
BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?\Z"
# Either alphabet (one per string), padded or not.
BASE64_ANY = (
    r"^(?:(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?"
    r"|(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}(?:==)?|[A-Za-z0-9_-]{3}=?)?)\Z"
)
DURATION = r"^-?[0-9]{1,11}(?:\.[0-9]{1,9})?s\Z"
FIELD_MASK = (
    r"^(?:[a-z][a-zA-Z0-9]*(?:\.[a-z][a-zA-Z0-9]*)*"
    r"(?:,[a-z][a-zA-Z0-9]*(?:\.[a-z][a-zA-Z0-9]*)*)*)?\Z"
)
SETTINGS = dict(
    database=None,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.generate],
)


class HarnessError(Exception):
    """Something the harness cannot do (not a finding about the renderings)."""


class IntentError(Exception):
    """The arguments mean no message: the rendering admitted them anyway."""


# ---------------------------------------------------------------- formats

RFC3339 = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"([Zz]|([+-])([0-9]{2}):([0-9]{2}))\Z"
)


def is_date_time(value):
    if not isinstance(value, str):
        return True
    m = RFC3339.match(value)
    if not m:
        return False
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    try:
        datetime.date(year if year else 4, month, day)  # year 0000 is RFC 3339
    except ValueError:
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    if m.group(9) and (int(m.group(10)) > 23 or int(m.group(11)) > 59):
        return False
    return True


FORMATS = jsonschema.FormatChecker(formats=())
FORMATS.checks("date-time")(is_date_time)
# `byte` is OpenAPI's, not JSON Schema's: an annotation here (see the docstring).
CUSTOM_FORMATS = {}


def validator(schema):
    return jsonschema.Draft202012Validator(schema, format_checker=FORMATS)


# ------------------------------------------------------------ descriptors


class Descriptors:
    def __init__(self, encoded):
        self.pool = descriptor_pool.Default()
        fds = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(encoded))
        self.proto3_optional = set()
        for fdp in fds.file:
            prefix = fdp.package + "." if fdp.package else ""
            for mp in fdp.message_type:
                self._optional(mp, prefix)
            try:
                self.pool.FindFileByName(fdp.name)
                continue  # already there (the well-known types)
            except KeyError:
                pass
            self.pool.Add(fdp)
        self.classes = {}

    def _optional(self, mp, prefix):
        for f in mp.field:
            if f.proto3_optional:
                self.proto3_optional.add(prefix + mp.name + "." + f.name)
        for nested in mp.nested_type:
            self._optional(nested, prefix + mp.name + ".")

    def message(self, name):
        return self.pool.FindMessageTypeByName(name)

    def cls(self, name):
        if name not in self.classes:
            self.classes[name] = message_factory.GetMessageClass(self.message(name))
        return self.classes[name]

    def real_oneof(self, field):
        o = field.containing_oneof
        if o is None or field.full_name in self.proto3_optional:
            return None
        return o


def is_map(f):
    return (
        f.type == FD.TYPE_MESSAGE
        and f.message_type.GetOptions().map_entry
        and is_repeated(f)
    )


def is_repeated(f):
    repeated = getattr(f, "is_repeated", None)
    if repeated is None:  # protobuf before 6
        return f.label == FD.LABEL_REPEATED
    return repeated


def is_wkt(md):
    return md.full_name.startswith(WKT_PACKAGE)


def field_by_prop(md, name):
    f = md.fields_by_name.get(name)
    if f is not None:
        return f
    for f in md.fields:
        if f.json_name == name:
            return f
    return None


def oneof_by_prop(descs, md, name):
    o = md.oneofs_by_name.get(name)
    if o is None:
        return None
    if all(f.full_name in descs.proto3_optional for f in o.fields):
        return None
    return o


def enum_usages(enum):
    return [
        v.name
        for v in enum.values
        if not (v.number == 0 and v.name.endswith("_UNSPECIFIED"))
    ]


# --------------------------------------------------------- schema shapes


def cores(node):
    """The non-null alternatives of a node (through nested `anyOf`)."""
    if not isinstance(node, dict):
        return []
    if "anyOf" in node:
        out = []
        for b in node["anyOf"]:
            out += cores(b)
        return out
    if node.get("type") == "null":
        return []
    return [node]


def types_of(node):
    t = node.get("type")
    if isinstance(t, list):
        return set(t)
    if isinstance(t, str):
        return {t}
    return set()


def is_string_node(node):
    return types_of(node) - {"null"} == {"string"}


def is_array_node(node):
    return "array" in types_of(node)


def cut_kind(node):
    """What a JSON-string cut stands for, from its prose; None if not a cut."""
    if not is_string_node(node):
        return None
    m = re.search(r"A JSON-encoded (.+?)\.(?:\s|$)", node.get("description", ""))
    return m.group(1) if m else None


def push_descriptions(node):
    """The description of an `anyOf` applies to its branches."""
    if isinstance(node, dict):
        if "anyOf" in node and "description" in node:
            for b in node["anyOf"]:
                if isinstance(b, dict) and "description" not in b and b.get("type") != "null":
                    b["description"] = node["description"]
        for v in node.values():
            push_descriptions(v)
    elif isinstance(node, list):
        for v in node:
            push_descriptions(v)


def refs_in(node, at=""):
    """The JSON pointer of the first `$ref` or `$defs` key in a rendering,
    or None."""
    if isinstance(node, dict):
        for k, v in node.items():
            here = f"{at}/{k.replace('~', '~0').replace('/', '~1')}"
            if k in ("$ref", "$defs"):
                return here
            found = refs_in(v, here)
            if found is not None:
                return found
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found = refs_in(v, f"{at}/{i}")
            if found is not None:
                return found
    return None


def passes_doubles(target):
    """Whether `target`'s arguments pass through doubles on their way."""
    return dialect_of(target) in STRUCT_TRANSPORT or host_of(target) in JAVASCRIPT_HOSTS


def dialect_of(target):
    """`openai@javascript` -> `openai`."""
    return target.split("@")[0]


def host_of(target):
    """`openai@javascript` -> `javascript`; `openai` -> `exact`."""
    return target.split("@")[1] if "@" in target else "exact"


class JavaScriptHost:
    """One long-lived `node` running `javascript_host.js`: each JSON text
    goes back as `JSON.stringify(JSON.parse(text))`, what a host written in
    JavaScript passes on (numbers as doubles)."""

    def __init__(self):
        node = shutil.which("node")
        if node is None:
            raise HarnessError(
                "`node` (Node.js) is not on the PATH: the @javascript targets deliver every draw through a "
                "real JSON.parse/JSON.stringify, as a host written in JavaScript does; install Node.js"
            )
        self.proc = subprocess.Popen(
            [node, NODE_SCRIPT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def roundtrip(self, text):
        self.proc.stdin.write(text.encode("utf-8") + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise HarnessError(f"node ({NODE_SCRIPT}) ended (exit status {self.proc.poll()})")
        out = line.decode("utf-8").rstrip("\n")
        if out.startswith("!"):
            raise HarnessError(f"JSON.parse refused a text Python wrote: {out[1:]}; text: {text[:300]}")
        return out

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def delivered(target, args, javascript):
    """The JSON text of the arguments as they reach the executor for
    `target`: through a `google.protobuf.Struct` for Gemini (as the API hands
    them back), then through `javascript` (a `JavaScriptHost`) for a
    JavaScript host; as the model wrote them otherwise."""
    if dialect_of(target) in STRUCT_TRANSPORT:
        carried = struct_pb2.Struct()
        json_format.ParseDict(args, carried)
        args = json_format.MessageToDict(carried)
    # Python writes an int as its exact digits, however large.
    text = json.dumps(args, allow_nan=False)
    if host_of(target) in JAVASCRIPT_HOSTS:
        text = javascript.roundtrip(text)
    return text


# Step b.
def gemini_to_json_schema(node):
    if isinstance(node, list):
        return [gemini_to_json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k in ("example", "propertyOrdering", "nullable"):
            continue
        if k == "format" and v == "enum":
            continue
        if k == "type" and isinstance(v, str):
            out[k] = v.lower()
        elif k == "properties":
            out[k] = {p: gemini_to_json_schema(s) for p, s in v.items()}
        elif k in ("items", "anyOf"):
            out[k] = gemini_to_json_schema(v)
        elif k in ("minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties") and isinstance(v, str):
            out[k] = int(v)
        else:
            out[k] = v
    if out.get("type") == "object" and "additionalProperties" not in out:
        out["additionalProperties"] = False
    if node.get("nullable") is True:
        outer = {"anyOf": [out, {"type": "null"}]}
        if "description" in out:
            outer["description"] = out["description"]
        return outer
    return out


# Step a.
CUT = object()


def def_name(ref):
    if not ref.startswith("#/$defs/"):
        raise HarnessError(f"unsupported $ref {ref}")
    return ref[len("#/$defs/"):].replace("~1", "/").replace("~0", "~")


class Unroller:
    def __init__(self, defs):
        self.defs = defs

    def run(self, root):
        out = self.node(root, [])
        if out is CUT:
            raise HarnessError("a recursive reference is required at the root")
        return out

    def node(self, node, stack):
        if isinstance(node, list):
            return [self.node(v, stack) for v in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            name = def_name(node["$ref"])
            if stack.count(name) >= UNROLL:
                return CUT
            inner = self.node(self.defs[name], stack + [name])
            if inner is CUT:
                return CUT
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if set(siblings) <= {"description", "title"}:
                merged = dict(inner)
                merged.update(siblings)
                return merged
            rest = self.node(siblings, stack)
            if rest is CUT:
                return CUT
            return {"allOf": [inner, rest]}
        out = {}
        required = node.get("required", [])
        for k, v in node.items():
            if k == "$defs":
                continue
            if k == "properties":
                props = {}
                for p, s in v.items():
                    r = self.node(s, stack)
                    if r is CUT:
                        if p in required:
                            return CUT
                        continue
                    props[p] = r
                out[k] = props
            elif k in ("anyOf", "oneOf"):
                branches = [b for b in (self.node(b, stack) for b in v) if b is not CUT]
                if not branches:
                    return CUT
                out[k] = branches
            elif k == "allOf":
                parts = [self.node(b, stack) for b in v]
                if any(p is CUT for p in parts):
                    return CUT
                out[k] = parts
            elif k == "items":
                r = self.node(v, stack)
                if r is CUT:
                    if node.get("minItems", 0) > 0:
                        return CUT
                    out["maxItems"] = 0
                else:
                    out[k] = r
            elif k == "additionalProperties" and isinstance(v, dict):
                r = self.node(v, stack)
                if r is CUT:
                    if node.get("minProperties", 0) > 0:
                        return CUT
                    out[k] = False
                    out["maxProperties"] = 0
                else:
                    out[k] = r
            elif k == "propertyNames":
                out[k] = self.node(v, stack)
            else:
                out[k] = v
        return out


# Step f.
ALL_TYPES = {"object", "array", "string", "number", "boolean", "null"}


def bounded_json(depth):
    """Any JSON value, nested at most `depth` levels, MAX_ITEMS wide."""
    scalars = [{"type": "null"}, {"type": "boolean"}, {"type": "number"}, {"type": "string"}]
    if depth == 0:
        return {"anyOf": scalars}
    inner = bounded_json(depth - 1)
    return {
        "anyOf": scalars
        + [
            {"type": "array", "items": inner, "maxItems": MAX_ITEMS},
            {"type": "object", "additionalProperties": inner, "maxProperties": MAX_ITEMS},
        ]
    }


def bound_sizes(node):
    """Arrays, maps and free JSON are bounded (narrowing, for run time)."""
    if isinstance(node, list):
        for v in node:
            bound_sizes(v)
        return
    if not isinstance(node, dict):
        return
    if types_of(node) >= ALL_TYPES and not ({"enum", "const", "anyOf"} & set(node)):
        keep = {k: v for k, v in node.items() if k in ("description", "title")}
        node.clear()
        node.update(keep)
        node.update(bounded_json(2))
        return
    if node.get("additionalProperties") is True:
        node["additionalProperties"] = bounded_json(1)
        node["maxProperties"] = min(node.get("maxProperties", MAX_ITEMS), MAX_ITEMS + len(node.get("required", [])))
    if "array" in types_of(node) and node.get("maxItems", MAX_ITEMS + 1) > MAX_ITEMS:
        node["maxItems"] = max(MAX_ITEMS, node.get("minItems", 0))
    if isinstance(node.get("additionalProperties"), dict) and node.get("maxProperties", MAX_ITEMS + 1) > MAX_ITEMS:
        node["maxProperties"] = max(MAX_ITEMS, node.get("minProperties", 0) + len(node.get("required", [])))
    for k, v in node.items():
        if k == "properties":
            for sub in v.values():
                bound_sizes(sub)
        elif k in ("items", "anyOf", "allOf", "oneOf", "additionalProperties", "propertyNames"):
            bound_sizes(v)


# Step c.
def ecma_pattern(pattern):
    out = []
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "d":
                out.append("0-9" if in_class else "[0-9]")
            elif nxt == "w":
                out.append("A-Za-z0-9_" if in_class else "[A-Za-z0-9_]")
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        if c == "$" and not in_class and i == len(pattern) - 1:
            out.append(r"\Z")
        else:
            out.append(c)
        i += 1
    return "".join(out)


def fix_patterns(node):
    if isinstance(node, dict):
        for k, v in list(node.items()):
            if k == "pattern" and isinstance(v, str):
                node[k] = ecma_pattern(v)
            elif k == "patternProperties" and isinstance(v, dict):
                node[k] = {ecma_pattern(p): s for p, s in v.items()}
                for s in node[k].values():
                    fix_patterns(s)
            else:
                fix_patterns(v)
    elif isinstance(node, list):
        for v in node:
            fix_patterns(v)


# Step d: the range of an integer written as a string of digits.
def _any_digits(n):
    return "" if n == 0 else "[0-9]" if n == 1 else f"[0-9]{{{n}}}"


def _digit_class(a, b):
    return a if a == b else f"[{a}-{b}]"


def _group(alternatives):
    return alternatives if "|" not in alternatives else f"(?:{alternatives})"


def _digits_same_length(x, y):
    """A regex for the digit strings of one length from x to y (x <= y;
    leading zeros are digits here: this spells suffixes)."""
    if x == y:
        return x
    n = len(x) - 1
    if x[1:] == "0" * n and y[1:] == "9" * n:
        if x[0] == "0" and y[0] == "9":
            return _any_digits(n + 1)
        return _digit_class(x[0], y[0]) + _any_digits(n)
    if x[0] == y[0]:
        return x[0] + _group(_digits_same_length(x[1:], y[1:]))
    parts = [x[0] + _group(_digits_same_length(x[1:], "9" * n))]
    if int(x[0]) + 1 <= int(y[0]) - 1:
        parts.append(_digit_class(str(int(x[0]) + 1), str(int(y[0]) - 1)) + _any_digits(n))
    parts.append(y[0] + _group(_digits_same_length("0" * n, y[1:])))
    return "|".join(parts)


def _natural_range(lo, hi):
    """Alternatives matching exactly the decimal strings (no leading zeros)
    of the integers from lo >= 0 to hi (None: unbounded)."""
    parts = []
    full = []  # the lengths whose every string (no leading zero) is in range
    last = None if hi is None else len(str(hi))
    for length in range(len(str(lo)), (last or len(str(lo))) + 1):
        start = max(lo, 10 ** (length - 1) if length > 1 else 0)
        end = 10**length - 1 if hi is None else min(10**length - 1, hi)
        if length > 1 and start == 10 ** (length - 1) and end == 10**length - 1:
            full.append(length)
        else:
            parts.append(_digits_same_length(str(start), str(end)))
    if hi is None:
        # every longer string too (the lengths run on from the first)
        first = full[0] if full else len(str(lo)) + 1
        parts.append(f"[1-9][0-9]{{{first - 1},}}")
    elif full:
        a, b = full[0] - 1, full[-1] - 1
        parts.append("[1-9]" + _any_digits(a) if a == b else f"[1-9][0-9]{{{a},{b}}}")
    return parts


def integer_range_pattern(lo, hi):
    """A pattern matching exactly the decimal strings of the integers from
    lo to hi (either None: unbounded), with no leading zeros and no `-0`."""
    alts = []
    if hi is None or hi >= 0:
        alts += _natural_range(max(lo, 0) if lo is not None else 0, hi)
    if lo is None or lo < 0:
        # -1 .. lo as the naturals from max(1, -hi) to -lo
        neg = _natural_range(max(1, -hi) if hi is not None else 1, None if lo is None else -lo)
        alts.append("-(?:" + "|".join(neg) + ")")
    return "^(?:" + "|".join(alts) + r")\Z"


# "An integer from X to Y, as a string of digits." (also "of at least X",
# "of at most Y", or neither).
DIGITS_SENTENCE = re.compile(
    r"An integer(?: from (-?[0-9]+) to (-?[0-9]+)| of at least (-?[0-9]+)| of at most (-?[0-9]+))?"
    r", as a string of digits\.(?:\s|$)"
)
# The patterns the renderer gives such a string (after step c).
DIGITS_PATTERNS = {r"^(0|-?[1-9][0-9]*)\Z", r"^(0|[1-9][0-9]*)\Z"}


def digits_range(text):
    """The (low, high) range a digits sentence states (None: unbounded), or
    None if the text has no such sentence."""
    m = DIGITS_SENTENCE.search(text)
    if m is None:
        return None
    lo, hi, least, most = (None if g is None else int(g) for g in m.groups())
    return (lo if least is None else least, hi if most is None else most)


# Step d (all but the JSON-string cuts, which need the descriptors).
def prose(node, counts):
    if isinstance(node, list):
        for v in node:
            prose(v, counts)
        return
    if not isinstance(node, dict):
        return
    text = node.get("description", "")
    ts = types_of(node)
    if text and "anyOf" not in node:
        added = set()
        if ts & {"integer", "number"}:
            number = r"(-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
            found = {}
            for word, key in (("least", "minimum"), ("most", "maximum")):
                m = re.search(rf"An? (?:integer|number) (?:of )?at {word} {number}\.(?:\s|$)", text)
                if m:
                    found[key] = m.group(1)
            m = re.search(rf"An? (?:integer|number) from {number} to {number}\.(?:\s|$)", text)
            if m:
                found.setdefault("minimum", m.group(1))
                found.setdefault("maximum", m.group(2))
            for key, v in found.items():
                if key not in node:
                    node[key] = int(v) if re.fullmatch(r"-?[0-9]+", v) else float(v)
                    added.add("bounds")
        if "string" in ts:
            bounds = digits_range(text)
            if bounds is not None:
                # Narrower than the rendering's own pattern (which admits
                # any length), which it replaces; another pattern is kept.
                exact = integer_range_pattern(*bounds)
                other = node.get("pattern")
                if other is not None and other not in DIGITS_PATTERNS:
                    node.setdefault("allOf", []).append({"pattern": other})
                node["pattern"] = exact
                added.add("digits")
            m = re.search(r"Must match the regular expression `([^`]+)`\.", text)
            if m and "pattern" not in node:
                node["pattern"] = ecma_pattern(m.group(1))
                added.add("pattern")
            m = re.search(r"at most ([0-9]+) digits, then at most ([0-9]+) after a point", text)
            duration = DURATION if m is None else rf"^-?[0-9]{{1,{m.group(1)}}}(?:\.[0-9]{{1,{m.group(2)}}})?s\Z"
            for needle, pattern, kind in (
                ("Base64-encoded bytes.", BASE64, "base64"),
                ("Base64 (standard or URL-safe alphabet, padded or not).", BASE64_ANY, "base64"),
                ("A duration in seconds with an `s` suffix", duration, "duration"),
                ("Comma-separated field paths in lowerCamelCase", FIELD_MASK, "field_mask"),
            ):
                if needle in text and "pattern" not in node:
                    node["pattern"] = pattern
                    added.add(kind)
            if "An RFC 3339 date-time" in text and "format" not in node:
                node["format"] = "date-time"
                added.add("date_time")
            m = re.search(r"Format: `([^`]+)`\.", text)
            if m and "format" not in node:
                node["format"] = m.group(1)
                added.add("format")
        for kind in added:
            counts[kind] += 1
        if added:
            counts["nodes"] += 1
    for k, v in node.items():
        if k in ("properties",):
            for s in v.values():
                prose(s, counts)
        elif k in ("items", "anyOf", "allOf", "oneOf", "additionalProperties", "propertyNames"):
            prose(v, counts)


# ------------------------------------------------------------- drawing


def _memoize_strategies():
    """Builds each subschema's strategy once.

    `hypothesis-jsonschema` rebuilds the strategy of a property's schema
    (canonicalising and validating it again) every time it draws that
    property, and again for every schema it is handed; on the corpus' large
    schemas that is most of the run time. The function is pure, and this
    harness always calls `from_schema` with the same arguments besides the
    schema, so the strategy built for a schema (the same object, or equal
    JSON) is kept and handed out again. Generation is unchanged.
    """
    from hypothesis_jsonschema import _from_schema as module

    inner = getattr(module, "__from_schema", None)
    if inner is None or getattr(inner, "_memoized", False):
        return
    by_id = {}
    by_text = {}

    def memoized(schema, *, alphabet, custom_formats):
        if not isinstance(schema, (dict, list)):
            return inner(schema, alphabet=alphabet, custom_formats=custom_formats)
        hit = by_id.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        try:
            key = json.dumps(schema, sort_keys=True)
        except (TypeError, ValueError):
            return inner(schema, alphabet=alphabet, custom_formats=custom_formats)
        strategy = by_text.get(key)
        if strategy is None:
            strategy = inner(schema, alphabet=alphabet, custom_formats=custom_formats)
            by_text[key] = strategy
        by_id[id(schema)] = (schema, strategy)
        return strategy

    memoized._memoized = True
    setattr(module, "__from_schema", memoized)


_memoize_strategies()


def draw(schema, n, budget=None):
    """At least `n` examples (distinct where the schema allows) of `schema`."""
    strategy = from_schema(schema, custom_formats=CUSTOM_FORMATS)
    seen = {}
    for factor in (1, 3):
        out = []

        @settings(max_examples=budget or n * factor, **SETTINGS)
        @given(strategy)
        def collect(value):
            out.append(value)

        collect()
        for v in out:
            seen.setdefault(json.dumps(v, sort_keys=True), v)
        if len(seen) >= n or budget:
            break
    values = list(seen.values())[: max(n, 1)]
    if not values:
        raise HarnessError("the generator produced nothing")
    # Pad with repeats where the schema has fewer distinct values than n.
    while len(values) < n:
        values.append(values[len(values) % len(seen)])
    return values


def first_example(schema):
    """The generator's first example of `schema`, its simplest: generating
    one is enough (more only where that one is rejected)."""
    try:
        return draw(schema, 1, budget=1)[0]
    except HarnessError:
        return draw(schema, 1, budget=3)[0]


# ------------------------------------------------ the descriptor walk


class Tool:
    def __init__(self, spec, descs, aliases):
        self.spec = spec
        self.name = spec["name"]
        self.request = descs.message(spec["request"])
        self.method_path = spec["method_path"]
        self.alias_fields = {}
        for a in spec["request_aliases"]:
            self.alias_fields[(a["message"], a["field"])] = a["prefix"]
        self.aliases = aliases  # prefix -> [(alias, uuid)]


class Walker:
    """Walks a prepared rendering along the request's descriptors.

    Applies step e (aliases, Any) and, for renderings, the JSON-string cuts
    of step d; for the canonical rendering it records where each message,
    map field and `Value` sits (the content of cuts) and the usages of the
    completeness phase.
    """

    def __init__(self, harness, tool, counts, index=None, digits=False):
        self.h = harness
        self.tool = tool
        self.digits = digits  # 64-bit integers in `Any` values as strings
        self.counts = counts
        self.index = index  # canonical: key -> node, filled; else read
        self.canonical = index is None
        self.found = {} if self.canonical else None
        self.usages = {}
        self.problems = []

    # messages
    def message(self, node, md, steps):
        for core in cores(node):
            if cut_kind(core) is not None:
                self.cut(core, ("message", md.full_name), steps)
                continue
            if is_wkt(md):
                self.wkt(core, md, steps)
                continue
            if self.canonical:
                self.found.setdefault(("message", md.full_name), core)
            for pname, pnode in core.get("properties", {}).items():
                f = field_by_prop(md, pname)
                if f is not None:
                    self.field(pnode, f, steps + [("field", f)])
                    continue
                o = oneof_by_prop(self.h.descs, md, pname)
                if o is not None:
                    if self.canonical:
                        self.found.setdefault(("oneof", o.full_name), pnode)
                    for branch in cores(pnode):
                        if cut_kind(branch) is not None:
                            # The whole oneof cut to its JSON text.
                            self.cut(branch, ("oneof", o.full_name), steps)
                            continue
                        for mname, mnode in branch.get("properties", {}).items():
                            m = field_by_prop(md, mname)
                            if m is None or m.containing_oneof is not o:
                                self.problems.append(
                                    f"{'.'.join(s[1].name for s in steps if s[0] == 'field') or '<root>'}: "
                                    f"`{pname}` has a member `{mname}` that is not in oneof {o.full_name}"
                                )
                            else:
                                self.field(mnode, m, steps + [("field", m)])
                    continue
                self.problems.append(f"{md.full_name}: property `{pname}` is no field or oneof")

    def wkt(self, core, md, steps):
        name = md.full_name
        if self.canonical:
            self.found.setdefault(("message", name), core)
        if name == ANY and "object" in types_of(core):
            options = self.h.any_options(self.tool, self.digits)
            keep = {k: v for k, v in core.items() if k == "description"}
            core.clear()
            core.update(keep)
            core["anyOf"] = copy.deepcopy(options)
            self.counts["any"] += 1
        elif name == LIST_VALUE and is_array_node(core):
            self.any_value(core.get("items"))

    def any_value(self, node):
        """A `google.protobuf.Value` where objects cannot be open: its string
        branch also draws from JSON texts of the canonical `Value` (objects
        and arrays among them), which the description says stand for what
        they hold."""
        branches = cores(node)
        if any("object" in types_of(b) for b in branches):
            return
        for core in branches:
            if is_string_node(core):
                self.counts["json_cut"] += 1
                self.counts["nodes"] += 1
                if self.canonical:
                    continue
                texts = self.h.content_texts(self.tool, ("message", VALUE), self.index)
                plain = {k: v for k, v in core.items() if k != "description"}
                core.clear()
                core["anyOf"] = [plain, {"enum": texts}]

    # fields
    def field(self, node, f, steps):
        if self.canonical:
            self.found.setdefault(("field", f.full_name), node)
            self.usage_of_field(node, f, steps)
        if is_map(f):
            vf = f.message_type.fields_by_name["value"]
            for core in cores(node):
                if cut_kind(core) is not None:
                    self.cut(core, ("field", f.full_name), steps)
                elif is_array_node(core):
                    for entry in cores(core.get("items")):
                        props = entry.get("properties", {})
                        if "value" in props:
                            self.element(props["value"], vf, f, steps + [("value",)])
                elif isinstance(core.get("additionalProperties"), dict):
                    self.element(core["additionalProperties"], vf, f, steps + [("value",)])
        elif is_repeated(f):
            for core in cores(node):
                if is_array_node(core):
                    self.element(core.get("items"), f, f, steps + [("item",)])
                elif cut_kind(core) is not None:
                    self.cut(core, ("field", f.full_name), steps)
        else:
            self.element(node, f, f, steps)

    def element(self, node, ef, owner, steps):
        if self.canonical:
            self.sixty_four_bit_usages(node, ef, owner, steps)
        if ef.type == FD.TYPE_MESSAGE:
            md = ef.message_type
            if md.full_name == VALUE:
                if self.canonical:
                    # the whole node: every kind of JSON value, null too
                    self.found.setdefault(("message", VALUE), node)
                self.any_value(node)
                return
            self.message(node, md, steps)
        elif ef.type == FD.TYPE_ENUM:
            if self.canonical:
                for value in enum_usages(ef.enum_type):
                    self.add_usage(("enum", owner.full_name, value, steps[-1][0] if steps and steps[-1][0] != "field" else ""), steps)
        elif ef.type == FD.TYPE_STRING:
            key = (owner.containing_type.full_name, owner.name)
            prefix = self.tool.alias_fields.get(key)
            if prefix is not None:
                known = [a for a, _ in self.tool.aliases.get(prefix, [])]
                for core in cores(node):
                    if is_string_node(core):
                        core["enum"] = known
                        self.counts["alias"] += 1

    # cuts (step d)
    def cut(self, core, key, steps):
        self.counts["json_cut"] += 1
        self.counts["nodes"] += 1
        if self.canonical:
            return
        core["enum"] = self.h.content_texts(self.tool, key, self.index)

    def map_key_node(self, node):
        """The key schema of a map node in the `[{key, value}]` form (the
        canonical rendering's, for a 64-bit key), or None."""
        for core in cores(node):
            if is_array_node(core):
                for entry in cores(core.get("items")):
                    if "key" in entry.get("properties", {}):
                        return entry["properties"]["key"]
        return None

    # usages (canonical only)
    def usage_of_field(self, node, f, steps):
        if self.h.descs.real_oneof(f) is not None:
            self.add_usage(("oneof", f.full_name), steps)
        if is_map(f):
            kf = f.message_type.fields_by_name["key"]
            self.add_usage(("map_key", f.full_name, FD_TYPE_NAMES.get(kf.type, str(kf.type))), steps)
            if kf.type in SIXTY_FOUR_BIT:
                self.sixty_four_bit_usages(self.map_key_node(node), kf, f, steps + [("key",)])
            vf = f.message_type.fields_by_name["value"]
            if vf.type == FD.TYPE_MESSAGE and is_wkt(vf.message_type):
                self.add_usage(("wkt", f.full_name, vf.message_type.full_name), steps)
        elif f.type == FD.TYPE_MESSAGE and is_wkt(f.message_type):
            self.add_usage(("wkt", f.full_name, f.message_type.full_name), steps)

    def sixty_four_bit_usages(self, node, ef, owner, steps):
        """The values of `SIGNED_64_VALUES` or `UNSIGNED_64_VALUES` a 64-bit
        integer (or its wrapper) at `steps` takes (those within the range
        the canonical node states)."""
        if ef.type == FD.TYPE_MESSAGE:
            unsigned = INT64_WRAPPERS.get(ef.message_type.full_name)
            if unsigned is None:
                return
        elif ef.type in SIXTY_FOUR_BIT:
            unsigned = ef.type in (FD.TYPE_UINT64, FD.TYPE_FIXED64)
        else:
            return
        lo, hi = (0, 2**64 - 1) if unsigned else (-(2**63), 2**63 - 1)
        for core in cores(node):
            if isinstance(core.get("minimum"), int):
                lo = max(lo, core["minimum"])
            if isinstance(core.get("maximum"), int):
                hi = min(hi, core["maximum"])
        where = steps[-1][0] if steps and steps[-1][0] != "field" else ""
        for value in UNSIGNED_64_VALUES if unsigned else SIGNED_64_VALUES:
            if lo <= value <= hi:
                self.add_usage(("int", owner.full_name, value, where), steps)

    def add_usage(self, key, steps):
        old = self.usages.get(key)
        if old is None or len(steps) < len(old):
            self.usages[key] = list(steps)


SIXTY_FOUR_BIT = {FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64, FD.TYPE_UINT64, FD.TYPE_FIXED64}
FD_TYPE_NAMES = {
    getattr(FD, n): n[len("TYPE_"):].lower() for n in dir(FD) if n.startswith("TYPE_")
}


# ------------------------------------------------------------ intent


class Intent:
    """What drawn arguments mean, as a dict for `json_format.ParseDict`."""

    def __init__(self, harness, tool):
        self.h = harness
        self.tool = tool

    def message(self, obj, md, raw):
        if isinstance(obj, str):
            obj = self.loads(obj, md.full_name)
            raw = True
        if is_wkt(md):
            return self.wkt(obj, md, None, raw)
        if not isinstance(obj, dict):
            raise IntentError(f"{md.full_name}: an object was expected, got {json.dumps(obj)[:80]}")
        out = {}
        for k, v in obj.items():
            f = field_by_prop(md, k)
            if f is not None:
                if v is None:
                    if self.null_value(f, raw):
                        out[f.name] = None
                    continue
                if f.name in out:
                    raise IntentError(f"{md.full_name}.{f.name} is set twice (proto and JSON names)")
                out[f.name] = self.field(v, f, raw)
                continue
            o = oneof_by_prop(self.h.descs, md, k)
            if o is not None:
                if v is None:
                    continue
                member_raw = raw
                if isinstance(v, str):
                    # The whole oneof cut to its JSON text; inside it,
                    # protojson rules (as for a cut message).
                    v = self.loads(v, o.full_name)
                    member_raw = True
                if not isinstance(v, dict):
                    raise IntentError(f"oneof {o.full_name}: an object was expected, got {json.dumps(v)[:80]}")
                members = [(mk, mv) for mk, mv in v.items() if mv is not None]
                if len(members) > 1:
                    raise IntentError(
                        f"oneof {o.full_name}: {len(members)} members set: {', '.join(m for m, _ in members)}"
                    )
                for mk, mv in members:
                    m = field_by_prop(md, mk)
                    if m is None or m.containing_oneof is not o:
                        raise IntentError(f"oneof {o.full_name} has no member `{mk}`")
                    if m.name in out:
                        raise IntentError(f"{md.full_name}.{m.name} is set twice")
                    out[m.name] = self.field(mv, m, member_raw)
                continue
            raise IntentError(f"{md.full_name} has no field or oneof `{k}`")
        return out

    def null_value(self, f, raw):
        """`null` on a singular `google.protobuf.Value` is the NullValue
        (protojson; every rendering's `Value` has a `null` of its own), except
        on a proto3 `optional` one, where the rendering's `null` is the
        optional field's: absent (inside a JSON text, protojson rules)."""
        return (
            f.type == FD.TYPE_MESSAGE
            and f.message_type.full_name == VALUE
            and not is_repeated(f)
            and (raw or f.containing_oneof is None)
        )

    def loads(self, text, what):
        try:
            return json.loads(text)
        except ValueError as e:
            raise IntentError(f"{what}: a string that is not JSON: {text[:80]!r} ({e})")

    def field(self, v, f, raw):
        if is_map(f):
            kf = f.message_type.fields_by_name["key"]
            vf = f.message_type.fields_by_name["value"]
            if isinstance(v, str):
                v = self.loads(v, f.full_name)
                raw = True
            entries = []
            if isinstance(v, list):
                for e in v:
                    if not isinstance(e, dict) or set(e) - {"key", "value"}:
                        raise IntentError(f"{f.full_name}: a map entry must be {{key, value}}: {json.dumps(e)[:80]}")
                    entries.append((e.get("key"), e.get("value")))
            elif isinstance(v, dict):
                entries = list(v.items())
            else:
                raise IntentError(f"{f.full_name}: a map was expected, got {json.dumps(v)[:80]}")
            out = {}
            for key, val in entries:
                if key is None:
                    raise IntentError(f"{f.full_name}: a map entry without a key")
                if isinstance(key, bool):
                    key = "true" if key else "false"
                elif not isinstance(key, str):
                    key = json.dumps(key)
                if val is None:
                    if vf.type == FD.TYPE_MESSAGE and vf.message_type.full_name == VALUE:
                        out[key] = None
                        continue
                    raise IntentError(f"{f.full_name}: a null map value")
                out[key] = self.element(val, vf, f, raw)
            return out
        if is_repeated(f):
            if not isinstance(v, list):
                raise IntentError(f"{f.full_name}: an array was expected, got {json.dumps(v)[:80]}")
            out = []
            for x in v:
                if x is None and not (f.type == FD.TYPE_MESSAGE and f.message_type.full_name == VALUE):
                    raise IntentError(f"{f.full_name}: a null element")
                out.append(None if x is None else self.element(x, f, f, raw))
            return out
        return self.element(v, f, f, raw)

    def element(self, v, ef, owner, raw):
        if ef.type == FD.TYPE_MESSAGE:
            md = ef.message_type
            if is_wkt(md):
                return self.wkt(v, md, owner, raw)
            return self.message(v, md, raw)
        if ef.type == FD.TYPE_STRING and isinstance(v, str):
            prefix = self.tool.alias_fields.get((owner.containing_type.full_name, owner.name))
            if prefix is not None:
                for alias, uuid in self.tool.aliases.get(prefix, []):
                    if v == alias:
                        return uuid
        return v

    def wkt(self, v, md, owner, raw):
        name = md.full_name
        if name == VALUE:
            return value_text(v)
        if name == LIST_VALUE:
            if isinstance(v, str):
                v = self.loads(v, name)
            if isinstance(v, list):
                return [value_text(x) for x in v]
            return v
        if name in (STRUCT, ANY, EMPTY) and isinstance(v, str):
            return self.loads(v, name)
        return v


# ---------------------------------------------------- the server side


class Recorder(grpc.GenericRpcHandler):
    def __init__(self, methods):
        self.methods = methods  # path -> (request class, response class)
        self.received = queue.Queue()

    def service(self, handler_call_details):
        entry = self.methods.get(handler_call_details.method)
        if entry is None:
            return None
        request_cls, response_cls = entry
        path = handler_call_details.method

        def handle(raw, context):
            message = request_cls.FromString(raw)
            as_dict = json_format.MessageToDict(message, preserving_proto_field_name=True)
            self.received.put((path, message, as_dict))
            return response_cls().SerializeToString()

        return grpc.unary_unary_rpc_method_handler(handle)


class Exec:
    def __init__(self, binary, addr):
        self.proc = subprocess.Popen(
            [binary, "exec", addr],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def call(self, tool, text, host):
        """Runs `tool` with the arguments' JSON text `text` (sent as it is),
        which came through a host of profile `host`."""
        head = json.dumps({"tool": tool, "host": host}).rstrip("}")
        self.proc.stdin.write(head + ', "args": ' + text + "}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise HarnessError(f"schema_truth exec ended (exit status {self.proc.poll()})")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


# ------------------------------------------------------------ harness


def category(text):
    """A failure's category: the message with its particulars elided."""
    text = text.split("\n")[0]
    text = re.sub(r"^(Failed to parse \w+ field: )+", "", text)
    text = re.sub(r"\.* at [A-Za-z0-9_.\[\]]+\.*$", "", text)
    text = re.sub(r"^[a-z0-9_]+: ", "", text)
    text = re.sub(r"`[^`]*`", "`…`", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"-?[0-9][0-9.e+]*", "N", text)
    text = re.sub(r"; (the valid|use one of|send).*", "", text)
    text = re.sub(r" at (?:'…'|[A-Za-z0-9_.\[\]]+)\.*$", "", text).rstrip(".")
    return text[:140]


class Harness:
    def __init__(self, binary, draws, only, max_tool_bytes=None):
        self.binary = binary
        self.draws = draws
        self.only = only
        self.max_tool_bytes = max_tool_bytes
        budget = ["--max-tool-bytes", str(max_tool_bytes)] if max_tool_bytes else []
        dump = subprocess.run([binary, "dump", *budget], check=True, capture_output=True, text=True)
        self.doc = json.loads(dump.stdout)
        self.descs = Descriptors(self.doc["descriptor_set"])
        self.aliases = {
            p: [(e["alias"], e["uuid"]) for e in entries] for p, entries in self.doc["aliases"].items()
        }
        self.tools = [
            Tool(spec, self.descs, self.aliases)
            for f in self.doc["files"]
            for spec in f["tools"]
            if (not only or spec["name"] in only) and (not max_tool_bytes or spec["cut"])
        ]
        if max_tool_bytes and not self.tools:
            raise HarnessError(f"--max-tool-bytes {max_tool_bytes} cuts no tool of the corpus")
        self.canonical = {}  # tool name -> (prepared canonical, index, usages)
        self.content = {}
        self.any_cache = {}
        self.failures = []  # (phase, dialect, category, detail)
        self.stats = defaultdict(Counter)  # dialect -> counter
        self.prose = defaultdict(Counter)  # dialect -> kind -> nodes
        self.complete = defaultdict(Counter)
        self.incomplete = defaultdict(list)
        self.distinct = {}
        self.drawn = {}
        self.minimals = {}
        self.prepared_cache = {}
        self.schema_keys = {}
        self.digits_indexes = {}
        self.pinned_cache = {}
        self.verbose = False

    # ---- preparation
    def prepare(self, tool, target, index=None):
        raw = copy.deepcopy(tool.spec["renderings"][target])
        schema = gemini_to_json_schema(raw) if dialect_of(target) == "gemini" else raw
        original = copy.deepcopy(schema)
        push_descriptions(schema)
        unroller = Unroller(schema.get("$defs", {}))
        schema = unroller.run(schema)
        fix_patterns(schema)
        bound_sizes(schema)
        counts = Counter()
        prose(schema, counts)
        walker = Walker(self, tool, counts, index, passes_doubles(target))
        walker.message(schema, tool.request, [])
        return schema, original, walker, counts

    def prepared(self, tool, target):
        key = (tool.name, target)
        if key not in self.prepared_cache:
            self.prepared_cache[key] = self.prepare(tool, target, self.index_for(tool, target))
        return self.prepared_cache[key]

    def schema_key(self, tool, target):
        """The prepared schema of (tool, target) as text (equal schemas are
        drawn once)."""
        key = (tool.name, target)
        if key not in self.schema_keys:
            self.schema_keys[key] = json.dumps(self.prepared(tool, target)[0], sort_keys=True)
        return self.schema_keys[key]

    def index_for(self, tool, target):
        """Where the content of `target`'s JSON-string cuts is drawn from: the
        canonical rendering's nodes, with every 64-bit integer as a string of
        digits where numbers pass through doubles (a cut's content is the
        message as that rendering writes it: "shaped as `…`")."""
        index = self.canonical_of(tool)[1]
        if not passes_doubles(target):
            return index
        if tool.name not in self.digits_indexes:
            self.digits_indexes[tool.name] = DigitsIndex(index)
        return self.digits_indexes[tool.name]

    def canonical_of(self, tool):
        if tool.name not in self.canonical:
            schema, original, walker, _ = self.prepare(tool, "canonical")
            self.canonical[tool.name] = (schema, walker.found, walker.usages, walker.problems)
        return self.canonical[tool.name]

    def content_schema(self, key, index):
        """The canonical schema of what a JSON-string cut holds (non-null)."""
        if key[0] == "message" and key[1] == VALUE:
            return index.get(key, {})
        node = index.get(key)
        if node is None:
            return None
        branches = cores(node)
        if not branches:
            return None
        return branches[0] if len(branches) == 1 else {"anyOf": branches}

    def minimal(self, schema):
        """One small value of `schema` (the generator's first), cached."""
        key = json.dumps(schema, sort_keys=True)
        if key not in self.minimals:
            self.minimals[key] = first_example(schema)
        return copy.deepcopy(self.minimals[key])

    def content_texts(self, tool, key, index):
        schema = self.content_schema(key, index)
        if schema is None:
            return ["{}"]
        cache_key = json.dumps(schema, sort_keys=True)
        if cache_key not in self.content:
            self.content[cache_key] = sorted({json.dumps(v) for v in draw(schema, CONTENT_DRAWS)})
        return list(self.content[cache_key])

    def any_options(self, tool, digits):
        """Concrete `Any` values (step e): a `Duration`, and the first message
        of the tool's proto made only of scalars and enums (no aliases), with
        a schema for its protojson form written here from its descriptor
        (64-bit integers as strings of digits where `digits`: where numbers
        pass through doubles, as the rendering's own 64-bit integers)."""
        if (tool.name, digits) in self.any_cache:
            return self.any_cache[(tool.name, digits)]
        options = [
            {
                "type": "object",
                "properties": {
                    "@type": {"const": "type.googleapis.com/google.protobuf.Duration"},
                    "value": {"type": "string", "pattern": r"^-?[0-9]{1,9}(?:\.[0-9]{1,9})?s\Z"},
                },
                "required": ["@type", "value"],
                "additionalProperties": False,
            }
        ]
        for md in messages_of(tool.request.file):
            if not md.fields or any(
                f.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP) or (md.full_name, f.name) in tool.alias_fields
                for f in md.fields
            ):
                continue
            props = {"@type": {"const": f"type.googleapis.com/{md.full_name}"}}
            for f in md.fields:
                one = scalar_schema(f, digits)
                props[f.json_name] = {"type": "array", "items": one, "maxItems": 3} if is_repeated(f) else one
            options.append(
                {"type": "object", "properties": props, "required": ["@type"], "additionalProperties": False}
            )
            break
        self.any_cache[(tool.name, digits)] = options
        return options

    # ---- sending
    def send(self, tool, target, args):
        """Sends one argument set as `target`'s provider delivers it; returns
        None or (category, detail)."""
        intent_error = None
        expected = None
        try:
            intent = Intent(self, tool).message(args, tool.request, False)
            expected = tool_cls = self.descs.cls(tool.request.full_name)()
            json_format.ParseDict(intent, tool_cls, ignore_unknown_fields=False, descriptor_pool=self.descs.pool)
        except IntentError as e:
            intent_error = f"the arguments mean no message: {e}"
        except (json_format.ParseError, ValueError, TypeError, OverflowError) as e:
            intent_error = f"the arguments mean no message: {e}"
        while not self.recorder.received.empty():
            self.recorder.received.get_nowait()
        result = self.exec.call(tool.name, delivered(target, args, self.javascript), host_of(target))
        received = None
        try:
            path, received, _ = self.recorder.received.get(timeout=0 if result["is_error"] else 10)
            if path != tool.method_path:
                return ("wrong method", f"called {path}, expected {tool.method_path}")
        except queue.Empty:
            pass
        detail = (
            f"args: {json.dumps(args)[:1500]}\n    executor: {'ERROR ' if result['is_error'] else ''}"
            f"{result['output'][:600]}"
        )
        if intent_error is not None:
            return ("schema admits: " + category(intent_error.split(": ", 1)[1]), f"{intent_error}\n    {detail}")
        if result["is_error"]:
            return ("executor refused: " + category(result["output"]), detail)
        if received is None:
            return ("no call reached the server", detail)
        if not same_message(received, expected):
            cat, what = message_diff(expected, received)
            return (
                f"server received a different message: {cat}",
                f"{detail}\n    first difference: {what}\n    intended: {json_format.MessageToJson(expected, indent=None, descriptor_pool=self.descs.pool)[:1500]}"
                f"\n    received: {json_format.MessageToJson(received, indent=None, descriptor_pool=self.descs.pool)[:1500]}",
            )
        return None

    def fail(self, phase, tool, target, cat, detail):
        self.failures.append((phase, target, cat, f"{tool.name} [{target}]\n    {detail}"))

    # ---- phase 1
    def soundness(self, tool, target):
        if host_of(target) in REFLESS_HOSTS:
            where = refs_in(tool.spec["renderings"][target])
            if where is not None:
                self.fail("soundness", tool, target, "a rendering for a host that refuses $ref holds $ref/$defs", f"at {where}")
        schema, original, walker, counts = self.prepared(tool, target)
        self.prose[target].update(counts)
        for p in walker.problems:
            self.fail("soundness", tool, target, "rendering property not in the message", p)
        loose = validator(original)
        # Identical prepared schemas (a strict twin of a tool, dialects that
        # render alike) give identical draws: draw once, send to each.
        key = self.schema_key(tool, target)
        if key not in self.drawn:
            self.drawn[key] = draw(schema, self.draws)
        examples = self.drawn[key]
        self.distinct[(tool.name, target)] = len({json.dumps(e, sort_keys=True) for e in examples})
        check = validator(schema)
        for args in examples:
            self.stats[target]["total"] += 1
            errors = [e.message for e in check.iter_errors(args)] + [e.message for e in loose.iter_errors(args)]
            if errors:
                self.fail("soundness", tool, target, "harness: a draw is invalid", f"{errors[0][:300]}\n    args: {json.dumps(args)[:800]}")
                continue
            problem = self.send(tool, target, args)
            if problem is None:
                self.stats[target]["accepted"] += 1
            else:
                self.fail("soundness", tool, target, *problem)

    # ---- phase 2
    def pinned_draw(self, tool, target, key, steps):
        """(args, errors under the pinned schema), or (None, why not
        expressible): the prepared schema pinned to the usage, and one example
        of it; drawn once per identical prepared schema."""
        schema = self.prepared(tool, target)[0]
        index = self.index_for(tool, target)
        ident = (
            self.schema_key(tool, target),
            passes_doubles(target),
            repr(key),
            tuple((s[0], s[1].full_name) if len(s) > 1 else s for s in steps),
        )
        if ident not in self.pinned_cache:
            pinned = copy.deepcopy(schema)
            pinner = Pinner(self, tool, index, key)
            try:
                ok = pinner.message(pinned, tool.request, steps)
            except HarnessError as e:
                ok, pinner.why = False, str(e)
            if not ok:
                self.pinned_cache[ident] = (None, pinner.why)
            else:
                args = first_example(pinned)
                self.pinned_cache[ident] = (args, [e.message for e in validator(pinned).iter_errors(args)])
        args, rest = self.pinned_cache[ident]
        return copy.deepcopy(args), rest

    def completeness(self, tool, target, usages):
        schema, original, walker, _ = self.prepared(tool, target)
        loose = validator(original)
        for key, steps in usages:
            label = f"{tool.name}: {usage_label(key, steps)}"
            self.complete[target]["total"] += 1
            args, rest = self.pinned_draw(tool, target, key, steps)
            if args is None:
                self.incomplete[target].append((label, "not expressible", rest))
                continue
            errors = [e.message for e in loose.iter_errors(args)] + rest
            if errors:
                self.incomplete[target].append(
                    (label, "harness: the pinned draw is invalid", f"{errors[0][:200]}; args {json.dumps(args)[:300]}")
                )
                continue
            problem = self.send(tool, target, args)
            if problem is not None:
                self.incomplete[target].append((label, problem[0], problem[1]))
                continue
            expected = self.descs.cls(tool.request.full_name)()
            json_format.ParseDict(
                Intent(self, tool).message(args, tool.request, False),
                expected,
                descriptor_pool=self.descs.pool,
            )
            if not carries(expected, steps, key):
                self.incomplete[target].append(
                    (label, "accepted, but the message does not carry it", f"args {json.dumps(args)[:300]}")
                )
                continue
            self.complete[target]["ok"] += 1

    # ---- run
    def run(self):
        started = time.monotonic()
        methods = {}
        for tool in self.tools:
            methods[tool.method_path] = (
                self.descs.cls(tool.spec["request"]),
                self.descs.cls(tool.spec["response"]),
            )
        self.recorder = Recorder(methods)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        server.add_generic_rpc_handlers((self.recorder,))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self.exec = Exec(self.binary, f"127.0.0.1:{port}")
        try:
            self.javascript = JavaScriptHost()
        except HarnessError:
            self.exec.close()
            server.stop(None)
            raise
        try:
            for m in self.doc.get("static_mismatches", []):
                self.failures.append(("dump", "-", "static rendering differs from the run-time one", m))
            timings = {}
            for tool in self.tools:
                t0 = time.monotonic()
                _, _, _, problems = self.canonical_of(tool)
                for p in problems:
                    self.fail("soundness", tool, "canonical", "rendering property not in the message", p)
                for target in TARGETS:
                    t1 = time.monotonic()
                    self.soundness(tool, target)
                    if self.verbose:
                        print(f"  {tool.name} [{target}] {time.monotonic() - t1:.1f}s", file=sys.stderr, flush=True)
                timings[tool.name] = time.monotonic() - t0
            sound_time = time.monotonic() - started
            done = set()
            usage_count = 0
            int_count = 0
            for tool in self.tools:
                _, _, usages, _ = self.canonical_of(tool)
                todo = []
                for key, steps in sorted(usages.items(), key=lambda kv: repr(kv[0])):
                    ident = (tool.request.full_name, key)
                    if ident in done:
                        continue
                    done.add(ident)
                    todo.append((key, steps))
                usage_count += len(todo)
                int_count += sum(1 for key, _ in todo if key[0] == "int")
                if not todo:
                    continue
                for target in TARGETS:
                    self.completeness(tool, target, todo)
            self.report(time.monotonic() - started, sound_time, timings, usage_count, int_count)
        finally:
            self.javascript.close()
            self.exec.close()
            server.stop(None)
        if self.max_tool_bytes:
            # Under a size budget the bar is soundness: what the cut
            # renderings admit is accepted and arrives as meant. What they
            # leave inexpressible is reported above, not claimed.
            return not self.failures
        return not self.failures and not any(self.incomplete.values())

    def report(self, elapsed, sound_time, timings, usage_count, int_count):
        out = []
        w = out.append
        w("== schema truth: soundness (every valid argument set is accepted and arrives as meant)")
        w(f"tools: {len(self.tools)}; renderings per tool: {len(TARGETS)}; draws per (tool, rendering): >= {self.draws}")
        small = defaultdict(dict)
        for (t, d), n in self.distinct.items():
            if n < self.draws:
                small[t][d] = n
        if small:
            parts = []
            for t, per in sorted(small.items()):
                counts = sorted(set(per.values()))
                where = "every rendering" if len(per) == len(TARGETS) else ", ".join(sorted(per))
                parts.append(f"{t} ({where}: {'/'.join(map(str, counts))})")
            w("  fewer distinct argument sets than draws where the schema has no more (sent repeatedly): " + "; ".join(parts))
        kinds = ["bounds", "digits", "pattern", "base64", "duration", "field_mask", "date_time", "format", "json_cut"]
        w(f"{'rendering':<30}{'accepted/total':>16}{'%':>8}   prose-only nodes ({', '.join(kinds)}); alias enums; Any nodes")
        for target in TARGETS:
            s = self.stats[target]
            p = self.prose[target]
            pct = 100.0 * s["accepted"] / s["total"] if s["total"] else 0.0
            w(f"{target:<30}{s['accepted']:>7}/{s['total']:<8}{pct:>8.1f}   {p['nodes']:>5} ("
              + ", ".join(str(p[k]) for k in kinds) + f"); {p['alias']}; {p['any']}")
        w("  (prose-only: nodes whose constraint the dialect states only in the description, formalised here"
          " (digits: the range of an integer written as a string of digits);"
          " Any nodes: `@type` restricted to types the pool knows, the one constraint no rendering states)")
        w("")
        w(
            f"== completeness: {usage_count} usages (enum values, oneof members, map key types, well-known-type fields,"
            f" 64-bit integer values: {int_count})"
        )
        for target in TARGETS:
            c = self.complete[target]
            w(f"{target:<30}{c['ok']} of {c['total']} usages expressible and accepted")
        examples = {}
        for target in TARGETS:
            by_cat = defaultdict(list)
            for label, cat, detail in self.incomplete[target]:
                by_cat[cat].append(label)
                examples.setdefault(cat, f"{label} [{target}]\n      {detail}")
            for cat, labels in sorted(by_cat.items(), key=lambda kv: -len(kv[1])):
                w(f"-- {target}: {len(labels)} x {cat}:")
                for label in labels[:12]:
                    w(f"     {label}")
                if len(labels) > 12:
                    w(f"     … and {len(labels) - 12} more")
        if examples:
            w("-- one example per completeness failure category:")
            for cat, detail in examples.items():
                w(f"   [{cat}] {detail}")
        w("")
        if self.failures:
            w(f"== soundness failures: {len(self.failures)}, by category (one example each)")
            by_cat = defaultdict(list)
            for phase, target, cat, detail in self.failures:
                by_cat[cat].append((target, detail))
            for cat, items in sorted(by_cat.items(), key=lambda kv: -len(kv[1])):
                per = Counter(t for t, _ in items)
                w(f"-- {len(items)} x {cat}  [" + ", ".join(f"{t}: {n}" for t, n in sorted(per.items())) + "]")
                w("   e.g. " + items[0][1])
        else:
            w("== no soundness failures")
        w("")
        slow = sorted(timings.items(), key=lambda kv: -kv[1])[:3]
        w(f"time: {elapsed:.1f}s (soundness {sound_time:.1f}s; slowest tools: "
          + ", ".join(f"{n} {t:.1f}s" for n, t in slow) + ")")
        print("\n".join(out), flush=True)


def same_message(a, b):
    if a == b:
        return True
    # `Any` holds bytes whose encoding may differ (map order); compare what
    # they mean, telling -0.0 from 0.0 as the encoding does.
    return contains_any(a.DESCRIPTOR, set()) and not differs(
        json_format.MessageToDict(a, preserving_proto_field_name=True),
        json_format.MessageToDict(b, preserving_proto_field_name=True),
    )


def message_diff(expected, received):
    """How two messages first differ: (category, detail). The path has map
    keys and list indices elided; known kinds of difference are named."""
    a = json_format.MessageToDict(expected, preserving_proto_field_name=True)
    b = json_format.MessageToDict(received, preserving_proto_field_name=True)

    def walk(x, y, md, path):
        if isinstance(x, dict) and isinstance(y, dict):
            for k in list(x) + [k for k in y if k not in x]:
                p, q = x.get(k, MISSING), y.get(k, MISSING)
                if not differs(p, q):
                    continue
                f = md.fields_by_name.get(k) if md is not None and not is_wkt(md) else None
                if f is None:
                    return walk(p, q, None, path + ([k] if md is not None and not is_wkt(md) else ["{}"]))
                sub = f.message_type if f.type == FD.TYPE_MESSAGE else None
                if is_map(f) and isinstance(p, dict) and isinstance(q, dict):
                    vf = f.message_type.fields_by_name["value"]
                    vmd = vf.message_type if vf.type == FD.TYPE_MESSAGE else None
                    for mk in list(p) + [mk for mk in q if mk not in p]:
                        if differs(p.get(mk, MISSING), q.get(mk, MISSING)):
                            return walk(p.get(mk, MISSING), q.get(mk, MISSING), vmd, path + [k + "{}"])
                if is_repeated(f) and isinstance(p, list) and isinstance(q, list) and len(p) == len(q):
                    for e, g in zip(p, q):
                        if differs(e, g):
                            return walk(e, g, sub, path + [k + "[]"])
                return walk(p, q, sub, path + [k])
        if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for e, g in zip(x, y):
                if differs(e, g):
                    return walk(e, g, None, path + ["[]"])
        return path, x, y

    path, x, y = walk(a, b, expected.DESCRIPTOR, [])
    where = ".".join(path) or "<root>"

    def show(v):
        return "absent" if v is MISSING else json.dumps(v)[:80]

    def kind(v):
        if v is MISSING:
            return "absent"
        if isinstance(v, dict):
            return "object"
        return {list: "array", str: "string", bool: "bool", int: "integer", float: "number"}.get(type(v), type(v).__name__)

    number = (int, float)
    if isinstance(x, float) and x == 0 and str(x).startswith("-") and (y is MISSING or y == 0):
        cat = "-0.0 arrives as 0.0 (a float32 underflow, or -0.0 itself)"
    elif isinstance(x, number) and isinstance(y, number) and not isinstance(x, bool) and not isinstance(y, bool):
        if x != 0 and abs(x - y) <= 1e-15 * max(abs(x), abs(y)):
            cat = "a number arrives off in its last digit (decimal parsing is not exact)"
        else:
            cat = f"a different number at {where}"
    elif x is MISSING and y is None:
        cat = "null on a google.protobuf.Value field arrives as NullValue (meant: absent)"
    elif isinstance(y, str) and not isinstance(x, str) and x is not MISSING and json.dumps(x) == y:
        cat = "a JSON-encoded value arrives as a string (the text is not decoded)"
    else:
        cat = f"at {where} (intended {kind(x)}, received {kind(y)})"
    return cat, f"at {where}: intended {show(x)}, received {show(y)}"


MISSING = object()


def value_text(v):
    """A `google.protobuf.Value` as its schema describes it in every
    rendering: a string holding an object's or array's JSON text stands for
    that object or array; any other value for itself."""
    if isinstance(v, str) and v.lstrip()[:1] in ("{", "["):
        try:
            parsed = json.loads(v)
        except ValueError:
            return v
        if isinstance(parsed, (dict, list)):
            return parsed
    return v


def differs(p, q):
    """Inequality that tells -0.0 from 0.0 (as the encoded messages do)."""
    if p is MISSING or q is MISSING:
        return p is not q
    return json.dumps(p, sort_keys=True) != json.dumps(q, sort_keys=True)


def contains_any(md, seen):
    if md.full_name == ANY:
        return True
    if md.full_name in seen:
        return False
    seen.add(md.full_name)
    return any(f.type == FD.TYPE_MESSAGE and contains_any(f.message_type, seen) for f in md.fields)


def messages_of(file):
    """Every message of a file, nested ones after their parent, in order."""
    out = []

    def visit(md):
        out.append(md)
        for nested in md.nested_types:
            visit(nested)

    for md in file.message_types_by_name.values():
        visit(md)
    return out


INT_RANGES = {
    FD.TYPE_INT32: (-(2**31), 2**31 - 1),
    FD.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FD.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FD.TYPE_UINT32: (0, 2**32 - 1),
    FD.TYPE_FIXED32: (0, 2**32 - 1),
    FD.TYPE_INT64: (-(2**63), 2**63 - 1),
    FD.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FD.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FD.TYPE_UINT64: (0, 2**64 - 1),
    FD.TYPE_FIXED64: (0, 2**64 - 1),
}


def scalar_schema(f, digits=False):
    """The protojson form of a scalar or enum field (for `Any` payloads);
    a 64-bit integer as a string of digits where `digits`."""
    if f.type in INT_RANGES:
        lo, hi = INT_RANGES[f.type]
        if digits and f.type in SIXTY_FOUR_BIT:
            return {"type": "string", "pattern": integer_range_pattern(lo, hi)}
        return {"type": "integer", "minimum": lo, "maximum": hi}
    if f.type == FD.TYPE_FLOAT:
        return {"type": "number", "minimum": -3.4e38, "maximum": 3.4e38}
    if f.type == FD.TYPE_DOUBLE:
        return {"type": "number"}
    if f.type == FD.TYPE_BOOL:
        return {"type": "boolean"}
    if f.type == FD.TYPE_BYTES:
        return {"type": "string", "pattern": BASE64}
    if f.type == FD.TYPE_ENUM:
        return {"type": "string", "enum": [v.name for v in f.enum_type.values]}
    return {"type": "string"}


def usage_label(key, steps):
    path = []
    for s in steps:
        if s[0] == "field":
            path.append(s[1].name)
        elif s[0] == "item":
            path.append("[]")
        elif s[0] == "key":
            path.append("{key}")
        else:
            path.append("{}")
    where = ".".join(path) or "<root>"
    if key[0] == "enum":
        return f"enum value {key[2]} at {where}"
    if key[0] == "oneof":
        return f"oneof member {key[1]} at {where}"
    if key[0] == "map_key":
        return f"map key type {key[2]} of {key[1]}"
    if key[0] == "int":
        return f"64-bit value {key[2]} at {where}"
    return f"well-known type {key[2]} at {where}"


class DigitsIndex:
    """A canonical index (key -> node) read with every 64-bit integer node as
    a string of digits of its range (the form of a rendering whose numbers
    pass through doubles); nodes are converted on first use."""

    def __init__(self, index):
        self.index = index
        self.converted = {}

    def get(self, key, default=None):
        if key not in self.index:
            return default
        if key not in self.converted:
            self.converted[key] = integers_as_digits(copy.deepcopy(self.index[key]))
        return self.converted[key]


def integers_as_digits(node):
    """`node` with every integer node whose range goes past 2^53 - 1 as a
    string of digits of that range (in place; returns it)."""
    if isinstance(node, list):
        for v in node:
            integers_as_digits(v)
    elif isinstance(node, dict):
        ts = types_of(node)
        if "integer" in ts:
            lo, hi = node.get("minimum"), node.get("maximum")
            if lo is None or hi is None or lo < -(2**53 - 1) or hi > 2**53 - 1:
                node.pop("minimum", None)
                node.pop("maximum", None)
                node["type"] = ["string", "null"] if "null" in ts else "string"
                node["pattern"] = integer_range_pattern(lo, hi)
                if "enum" in node:
                    node["enum"] = [v if v is None else str(v) for v in node["enum"]]
        for v in node.values():
            integers_as_digits(v)
    return node


# ------------------------------------------------------------ pinning


def make_non_null(node):
    """Narrows a node to its non-null alternatives, in place; False if none."""
    if "anyOf" in node:
        branches = cores(node)
        if not branches:
            return False
        keep = {k: v for k, v in node.items() if k not in ("anyOf",)}
        node.clear()
        if len(branches) == 1:
            node.update(keep)
            node.update(branches[0])
        else:
            node.update(keep)
            node["anyOf"] = branches
        return True
    t = node.get("type")
    if isinstance(t, list):
        t = [x for x in t if x != "null"]
        if not t:
            return False
        node["type"] = t if len(t) > 1 else t[0]
    elif t == "null":
        return False
    if "enum" in node:
        node["enum"] = [v for v in node["enum"] if v is not None]
        if not node["enum"]:
            return False
    return True


def shrink_off_path(core, keep, minimal):
    """Off the path: optional properties are dropped, nullable required ones
    set to null, and the other required ones to a fixed small value drawn
    from their own schema (`minimal`)."""
    required = set(core.get("required", []))
    props = core.get("properties", {})
    for p in list(props):
        if p in keep:
            continue
        if p not in required:
            del props[p]
            continue
        s = props[p]
        if isinstance(s, dict) and (
            any(isinstance(b, dict) and b.get("type") == "null" for b in s.get("anyOf", []))
            or "null" in types_of(s)
        ):
            props[p] = {"type": "null"}
        elif isinstance(s, dict):
            props[p] = {"const": minimal(s)}


class Pinner:
    def __init__(self, harness, tool, index, key):
        self.h = harness
        self.tool = tool
        self.index = index
        self.key = key
        self.why = ""
        self.crossed_cut = False

    def no(self, why):
        self.why = why
        return False

    def core_of(self, node):
        if not make_non_null(node):
            return None
        cs = cores(node)
        if len(cs) != 1:
            return None
        return node if "anyOf" not in node else cs[0]

    def through_cut(self, node, content_key, pin):
        """Pins the rest of the path inside a JSON-string cut's content."""
        content = self.index.get(content_key)
        if content is None:
            return self.no(f"cut to a JSON string whose content ({content_key[1]}) the canonical rendering lacks")
        content = copy.deepcopy(content)
        if not pin(content):
            return False
        value = draw(content, 1, budget=5)[0]
        node["enum"] = [json.dumps(value)]
        self.crossed_cut = True
        return True

    def pin_integer(self, node, ef):
        """The 64-bit value, in the form the rendering gives: a string of
        digits on a string node, a JSON integer on an integer node."""
        core = self.core_of(node)
        if core is None:
            return self.no(f"`{ef.name}` is not one node here")
        value = self.key[2]
        if is_string_node(core):
            core["enum"] = [str(value)]
        elif types_of(core) & {"integer", "number"}:
            core["enum"] = [value]
        else:
            return self.no(f"`{ef.name}` is neither a string nor an integer here")
        return True

    def message(self, node, md, steps):
        if not steps:
            return True
        core = self.core_of(node)
        if core is None:
            return self.no(f"{md.full_name} is only null here")
        if cut_kind(core) is not None:
            return self.through_cut(core, ("message", md.full_name), lambda c: self.message(c, md, steps))
        props = core.get("properties")
        if props is None:
            return self.no(f"{md.full_name} has no properties here")
        f = steps[0][1]
        o = self.h.descs.real_oneof(f)
        if o is not None and oneof_by_prop(self.h.descs, md, o.name) and o.name in props:
            shrink_off_path(core, {o.name}, self.h.minimal)
            core.setdefault("required", [])
            if o.name not in core["required"]:
                core["required"].append(o.name)
            wrapper = props[o.name]
            if not make_non_null(wrapper):
                return self.no(f"oneof {o.name} is only null")
            for branch in cores(wrapper):
                for mname in branch.get("properties", {}):
                    if field_by_prop(md, mname) is f:
                        chosen = copy.deepcopy(branch)
                        wrapper.clear()
                        wrapper.update(chosen)
                        shrink_off_path(wrapper, {mname}, self.h.minimal)
                        wrapper.setdefault("required", [])
                        if mname not in wrapper["required"]:
                            wrapper["required"].append(mname)
                        return self.field(wrapper["properties"][mname], f, steps[1:])
            return self.no(f"oneof `{o.name}` has no branch for `{f.name}`")
        pname = next((p for p in props if field_by_prop(md, p) is f), None)
        if pname is None:
            return self.no(f"`{f.name}` is not a property of {md.full_name} here")
        if o is not None:
            # the flat form: drop the other members
            for other in o.fields:
                for p in list(props):
                    if p != pname and field_by_prop(md, p) is other:
                        if p not in core.get("required", []):
                            del props[p]
                        elif "null" in types_of(props[p]) or any(
                            b.get("type") == "null" for b in props[p].get("anyOf", []) if isinstance(b, dict)
                        ):
                            props[p] = {"type": "null"}
                        else:
                            return self.no(f"`{p}`, another member of oneof {o.name}, is required and not nullable")
        shrink_off_path(core, {pname}, self.h.minimal)
        core.setdefault("required", [])
        if pname not in core["required"]:
            core["required"].append(pname)
        return self.field(props[pname], f, steps[1:])

    def field(self, node, f, steps):
        if not is_map(f) and not is_repeated(f):
            return self.element(node, f, steps)
        core = self.core_of(node)
        if core is None:
            return self.no(f"`{f.name}` is only null here")
        if is_map(f):
            if cut_kind(core) is not None:
                return self.through_cut(core, ("field", f.full_name), lambda c: self.field(c, f, steps))
            vf = f.message_type.fields_by_name["value"]
            if is_array_node(core):
                core["minItems"] = max(1, core.get("minItems", 0))
                core.pop("maxItems", None)
                entry = core.get("items")
                if entry is None or self.core_of(entry) is None:
                    return self.no(f"map `{f.name}` has no entries here")
                entry_core = self.core_of(entry)
                if steps and steps[0][0] == "value":
                    return self.element(entry_core["properties"]["value"], vf, steps[1:])
                if steps and steps[0][0] == "key":
                    return self.element(entry_core["properties"]["key"], f.message_type.fields_by_name["key"], steps[1:])
                return True
            core["minProperties"] = max(1, core.get("minProperties", 0))
            core.pop("maxProperties", None)
            if not isinstance(core.get("additionalProperties"), dict):
                return self.no(f"map `{f.name}` takes no entries here")
            if steps and steps[0][0] == "value":
                return self.element(core["additionalProperties"], vf, steps[1:])
            if steps and steps[0][0] == "key" and self.key[0] == "int":
                core["propertyNames"] = {"enum": [str(self.key[2])]}
                return True
            return True
        if is_repeated(f):
            if cut_kind(core) is not None:
                return self.through_cut(core, ("field", f.full_name), lambda c: self.field(c, f, steps))
            if not is_array_node(core) or "items" not in core:
                return self.no(f"`{f.name}` takes no items here")
            core["minItems"] = max(1, core.get("minItems", 0))
            core["maxItems"] = max(core["minItems"], min(core.get("maxItems", 2), 2))
            if steps and steps[0][0] == "item":
                return self.element(core["items"], f, steps[1:])
            return True
        raise HarnessError("unreachable")

    def element(self, node, ef, steps):
        if not steps:
            # The usage itself: present and non-null (an `Any` or `Value`
            # keeps all its alternatives).
            if not make_non_null(node):
                return self.no(f"`{ef.name}` is only null here")
            if self.key[0] == "int":
                return self.pin_integer(node, ef)
            if self.key[0] != "enum":
                return True
            core = self.core_of(node)
            if core is None:
                return self.no(f"`{ef.name}` is not one enum here")
            value = self.key[2]
            if "enum" in core:
                if value not in core["enum"]:
                    return self.no(f"the enum lists {core['enum']}")
                core["enum"] = [value]
            elif is_string_node(core):
                core["enum"] = [value]
            else:
                return self.no("not a string")
            return True
        if self.core_of(node) is None:
            return self.no(f"`{ef.name}` is only null here")
        if ef.type == FD.TYPE_MESSAGE:
            return self.message(node, ef.message_type, steps)
        return self.no("the path goes on past a scalar")


def carries(msg, steps, key):
    """Whether the parsed message uses the pinned usage at its path."""
    containers = [msg]
    for i, step in enumerate(steps):
        if step[0] != "field":
            continue
        f = step[1]
        last = i == len(steps) - 1
        nxt = steps[i + 1][0] if i + 1 < len(steps) else None
        out = []
        for m in containers:
            if not isinstance(m, message_cls_base()):
                continue
            if last and key[0] == "oneof":
                if m.WhichOneof(f.containing_oneof.name) == f.name:
                    out.append(getattr(m, f.name))
                continue
            if is_map(f):
                coll = getattr(m, f.name)
                if nxt == "value":
                    out.extend(coll[k] for k in coll)
                elif nxt == "key":
                    out.extend(coll)
                elif len(coll):
                    out.append(coll)
            elif is_repeated(f):
                coll = getattr(m, f.name)
                if nxt == "item":
                    out.extend(coll)
                elif len(coll):
                    out.append(coll)
            elif f.type == FD.TYPE_MESSAGE:
                if m.HasField(f.name):
                    out.append(getattr(m, f.name))
            else:
                if f.has_presence and not m.HasField(f.name):
                    continue
                out.append(getattr(m, f.name))
        containers = out
    if key[0] == "enum":
        f = [s[1] for s in steps if s[0] == "field"][-1]
        enum = f.message_type.fields_by_name["value"].enum_type if is_map(f) else f.enum_type
        number = enum.values_by_name[key[2]].number
        return any(c == number for c in containers)
    if key[0] == "int":
        # the value itself, or a wrapper holding it
        return any(getattr(c, "value", c) == key[2] and not isinstance(c, bool) for c in containers)
    return bool(containers)


def message_cls_base():
    from google.protobuf.message import Message

    return Message


# Fewer draws than this per (tool, rendering) would leave a schema's
# branches, bounds and lengths barely sampled; completeness (every enum value,
# oneof member, map key type, 64-bit extreme) is pinned apart, whatever the
# count.
MIN_DRAWS = 20


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", help="the schema_truth binary")
    parser.add_argument(
        "--draws",
        type=int,
        default=50,
        help=f"draws per (tool, rendering), at least {MIN_DRAWS} (the test under `cargo test` draws 20 unless AI_TOOLS_SCHEMA_TRUTH_DRAWS says more)",
    )
    parser.add_argument("--only", action="append", help="run only these tools")
    parser.add_argument("--verbose", action="store_true", help="time each (tool, rendering) on stderr")
    parser.add_argument(
        "--max-tool-bytes",
        type=int,
        help="render within this size budget and run only the tools it cuts (the size budget's truth)",
    )
    args = parser.parse_args()
    if args.draws < MIN_DRAWS and not args.only:
        parser.error(f"--draws must be at least {MIN_DRAWS} for a full run")
    harness = Harness(args.binary, args.draws, set(args.only or ()), args.max_tool_bytes)
    harness.verbose = args.verbose
    try:
        ok = harness.run()
    except HarnessError as e:
        print(f"schema truth: the harness cannot run: {e}", file=sys.stderr, flush=True)
        sys.exit(2)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
