#!/usr/bin/env bash
# Checks that the five published packages are complete as crates.io would
# get them, before anything is published. `.ci/run` runs it after the tests.
#
# 1. `cargo publish --dry-run --no-verify` of proto-ai-tools-schema, -macros,
#    proto-ai-tools, -mcp and -cli together, in dependency order: what
#    crates.io's rules refuse before any build (`publish = false`, a
#    dependency without a version, a missing licence or description) fails
#    here. Given together, each resolves its unpublished siblings from a
#    local registry of their packages (target/package/tmp-registry).
# 2. `cargo package --no-verify` of the same five, which writes the .crate
#    files to target/package/ (`cargo publish --dry-run` of several packages
#    leaves them under target/package/tmp-crate/ in cargo 1.95, a place of
#    its own). Each must hold LICENSE-MIT, LICENSE-APACHE (symlinks in the
#    tree, packaged as files), README.md, a manifest with rust-version,
#    description, license and repository, and, for a library with features,
#    docs.rs metadata that builds its docs with all of them; the schema
#    package must hold its annotation protos.
# 3. The packaged sources built against each other, in place of cargo's own
#    verification: the five .crate files are unpacked into a copy of the
#    workspace, where they stand in for the five members and
#    `[patch.crates-io]` points each `proto-ai-tools* = "=0.1.0"` of theirs
#    at its unpacked sibling, so only what is in the packages is there. The
#    other members (tests, benches, ...) are kept as their manifests alone,
#    with an empty library: they compile nothing, but their dependencies
#    and features stay, so every dependency resolves to the features of
#    the workspace's `cargo test --workspace --all-features`, and with the
#    workspace's profile its builds in the shared target dir are used again.
#    (cargo's verification builds each package alone, with its own profile
#    and full debug info: every dependency of the CLI a second time, 6.5
#    minutes and several GB in CI's fresh target dir.) One
#    `cargo build --workspace --all-features` then builds the four
#    libraries and the CLI's binary from their packages, and a fresh crate,
#    `links-agent`, that depends on `proto-ai-tools = "0.1.0"` and
#    `proto-ai-tools-mcp` (oauth, redis, tool-search) as a user's would: it
#    expands `ai_tools!` on the Quickstart's proto (the annotation imports
#    come from the packaged schema crate), and its example runs and prints
#    the tools. No build may change a package's files.
#
# Usage: scripts/publish-check.sh   (from anywhere; takes --allow-dirty work
# trees, since it checks what would be packaged, not that it is committed)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
PACKAGES=(proto-ai-tools-schema proto-ai-tools-macros proto-ai-tools proto-ai-tools-mcp proto-ai-tools-cli)
args=()
for p in "${PACKAGES[@]}"; do args+=(-p "$p"); done
# The packages are written to, and the copy of the workspace is built in,
# the workspace's target dir (CARGO_TARGET_DIR's, if set), where the
# tests' builds of the dependencies are.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PACKAGE_DIR="$CARGO_TARGET_DIR/package"

echo "== cargo publish --dry-run --no-verify ${PACKAGES[*]} (version $VERSION)"
cargo publish --dry-run --no-verify --allow-dirty "${args[@]}"

echo "== cargo package --no-verify: the .crate files in target/package/"
for p in "${PACKAGES[@]}"; do rm -f "$PACKAGE_DIR/$p-$VERSION.crate"; done
cargo package --no-verify --allow-dirty "${args[@]}"

for p in "${PACKAGES[@]}"; do
  crate="$PACKAGE_DIR/$p-$VERSION.crate"
  [ -f "$crate" ] || { echo "publish-check: $crate was not written" >&2; exit 1; }
  listing=$(tar tzf "$crate")
  for f in LICENSE-MIT LICENSE-APACHE README.md Cargo.toml; do
    grep -qx "$p-$VERSION/$f" <<<"$listing" \
      || { echo "publish-check: $crate lacks $f" >&2; exit 1; }
  done
  # A symlink in the tree must be packaged as the file it points at.
  long_listing=$(tar tvzf "$crate")
  if grep -q '^l' <<<"$long_listing"; then
    echo "publish-check: $crate holds symlinks: $(grep '^l' <<<"$long_listing")" >&2
    exit 1
  fi
  tar xzOf "$crate" "$p-$VERSION/Cargo.toml" | python3 -c '
import sys, tomllib
name = sys.argv[1]
manifest = tomllib.loads(sys.stdin.read())
package = manifest["package"]
missing = [key for key in ("rust-version", "description", "license", "repository") if not package.get(key)]
if missing:
    sys.exit(f"publish-check: {name} has no " + ", ".join(missing))
features = [f for f in manifest.get("features", {}) if f != "default"]
docs_rs = package.get("metadata", {}).get("docs", {}).get("rs", {})
if "lib" in manifest and features and docs_rs.get("all-features") is not True:
    sys.exit(f"publish-check: {name} has features (" + ", ".join(features) + ") but no "
             "[package.metadata.docs.rs] all-features = true: docs.rs would leave their items out")
' "$p" || exit 1
done
# (Listings are read whole before grep -q: with pipefail, tar killed by the
# pipe grep -q closes early would fail the check.)
schema_listing=$(tar tzf "$PACKAGE_DIR/proto-ai-tools-schema-$VERSION.crate")
for f in ai/context/v1/annotations.proto ai/tools/v1/annotations.proto ai/tools/v1/rpc_tool.proto google/api/field_behavior.proto annotations.binpb buf.yaml; do
  grep -qx "proto-ai-tools-schema-$VERSION/proto/$f" <<<"$schema_listing" \
    || { echo "publish-check: proto-ai-tools-schema lacks proto/$f" >&2; exit 1; }
done

echo "== the packaged sources built against each other, and a fresh crate on them"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cargo metadata --no-deps --format-version 1 >"$WORK/metadata.json"
# The copy of the workspace: its members under m/ (so that no unit of the
# copy has the name and path, relative to its workspace, of one of the
# workspace's own, and none of its builds replaces theirs), the packages
# unpacked with the time of unpacking as their files' (cargo's fixed
# 2006-07-24 would pass for older than the last run's builds), the other
# members as manifests with an empty library, and the root manifest with
# the members, the workspace's path dependencies and the patches moved.
python3 - "$ROOT" "$WORK" "$PACKAGE_DIR" "$VERSION" "${PACKAGES[@]}" <<'PY'
import json, os, re, subprocess, sys, tomllib

root, work, package_dir, version, *published = sys.argv[1:]
metadata = json.load(open(os.path.join(work, "metadata.json")))

def key(k):
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)

def value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    return "{" + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + "}"

def toml(table, path=(), out=None):
    out = [] if out is None else out
    scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in table.items() if isinstance(v, dict)}
    if path and (scalars or not tables):
        out.append("[" + ".".join(key(p) for p in path) + "]")
    out.extend(f"{key(k)} = {value(v)}" for k, v in scalars.items())
    for k, v in tables.items():
        toml(v, path + (k,), out)
    return "\n".join(out) + "\n"

members = [p for p in metadata["packages"] if p["id"] in metadata["workspace_members"]]
m = os.path.join(work, "m")
libraries = {}
for package in members:
    directory = os.path.relpath(os.path.dirname(package["manifest_path"]), root)
    target = os.path.join(m, directory)
    os.makedirs(target)
    if package["name"] in published:
        crate = os.path.join(package_dir, f"{package['name']}-{version}.crate")
        subprocess.run(["tar", "xzmf", crate, "-C", target, "--strip-components=1"], check=True)
        if any("lib" in t["kind"] or "proc-macro" in t["kind"] for t in package["targets"]):
            libraries[package["name"]] = "m/" + directory
        continue
    with open(package["manifest_path"], "rb") as f:
        manifest = tomllib.load(f)
    stub = {"package": {k: v for k, v in manifest["package"].items()
                        if k in ("name", "version", "edition")}}
    stub["package"].update(publish=False, build=False, autolib=False, autobins=False,
                           autoexamples=False, autotests=False, autobenches=False)
    stub["lib"] = {k: v for k, v in manifest.get("lib", {}).items() if k in ("name", "proc-macro")}
    stub["lib"]["path"] = "lib.rs"
    for section in ("features", "dependencies", "dev-dependencies", "build-dependencies", "target"):
        if section in manifest:
            stub[section] = manifest[section]
    with open(os.path.join(target, "Cargo.toml"), "w") as f:
        f.write(toml(stub))
    open(os.path.join(target, "lib.rs"), "w").close()

with open(os.path.join(root, "Cargo.toml"), "rb") as f:
    workspace = tomllib.load(f)
ws = workspace["workspace"]
ws["members"] = ["m/" + x for x in ws["members"]] + ["links-agent"]
for k in ("default-members", "exclude"):
    if k in ws:
        ws[k] = ["m/" + x for x in ws[k]]
for spec in ws.get("dependencies", {}).values():
    if isinstance(spec, dict) and "path" in spec:
        spec["path"] = "m/" + spec["path"]
workspace.setdefault("patch", {}).setdefault("crates-io", {}).update(
    {name: {"path": path} for name, path in libraries.items()})
with open(os.path.join(work, "Cargo.toml"), "w") as f:
    f.write(toml(workspace))
PY
APP="$WORK/links-agent"
mkdir -p "$APP/src" "$APP/examples" "$APP/proto/links/v1"
cp quickstart/proto/links/v1/links.proto "$APP/proto/links/v1/"
cat >"$APP/Cargo.toml" <<EOF
[package]
name = "links-agent"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
proto-ai-tools = "$VERSION"
proto-ai-tools-mcp = { version = "$VERSION", features = ["oauth", "redis", "tool-search"] }
serde_json = "1"
EOF
cat >"$APP/src/lib.rs" <<'EOF'
//! A user's crate: tools from an annotated proto, and the gateway that
//! would serve them.
pub mod gentools {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

pub use proto_ai_tools_mcp::McpServer;
EOF
cat >"$APP/examples/print_tools.rs" <<'EOF'
fn main() {
    for tool in links_agent::gentools::all_tools() {
        let parameters: serde_json::Value =
            serde_json::from_str(tool.parameters()).expect("parameters are JSON");
        println!("{} {}", tool.name, parameters["type"]);
    }
}
EOF
# The workspace's lock file: the same versions as the workspace's own build.
cp Cargo.lock "$WORK/Cargo.lock"
fingerprint() { (cd "$WORK/m" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
before=$(fingerprint)
# `--example` makes it a build with dev-dependencies, as the tests' build
# was: their features are part of what each dependency is built with.
(cd "$WORK" && cargo build --workspace --all-features --lib --bins --example print_tools) \
  || { echo "publish-check: the packaged sources do not build against each other, or the fresh crate does not build on them (see above)" >&2; exit 1; }
[ "$(fingerprint)" = "$before" ] \
  || { echo "publish-check: building the packages changed their files: $(diff <(echo "$before") <(fingerprint) | grep '^[<>]' | head -5)" >&2; exit 1; }
out=$("$CARGO_TARGET_DIR/debug/examples/print_tools")
echo "$out"
grep -qx 'links_create "object"' <<<"$out" \
  || { echo "publish-check: the fresh crate did not print the tool links_create with an object schema" >&2; exit 1; }
echo "publish-check: ok"
