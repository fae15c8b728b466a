#!/usr/bin/env bash
# Checks that the five published packages are complete as crates.io would
# get them, before anything is published:
#
# 1. `cargo publish --dry-run` of proto-ai-tools-schema, -macros,
#    proto-ai-tools, -mcp and -cli together, in dependency order. Given together,
#    cargo packages each and verifies it (builds the packaged sources) against
#    the packages of the siblings before it, from a local registry under
#    target/package/tmp-registry: no `--no-verify` is needed although none
#    of them is on crates.io yet. One of them alone would fail to resolve
#    its unpublished siblings.
# 2. A fresh crate outside the workspace depends on `proto-ai-tools = "0.1.0"`
#    from crates.io, with `[patch.crates-io]` pointing the three library
#    packages at the unpacked .crate files of step 1: only what is in the
#    packages is there. It expands `ai_tools!` on an annotated proto (whose
#    annotation imports come from the packaged schema crate), builds, runs
#    and checks the tools it prints.
#
# Usage: scripts/publish-check.sh   (from anywhere; takes --allow-dirty work
# trees, since it checks what would be packaged, not that it is committed)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
PACKAGES=(proto-ai-tools-schema proto-ai-tools-macros proto-ai-tools proto-ai-tools-mcp proto-ai-tools-cli)

# cargo unpacks the packages of that local registry into its own registry
# cache, in a directory named after the registry's path (`-<hash>`, where
# crates.io's is `index.crates.io-<hash>`), and never unpacks a version
# again once there: a second run would verify each package against the
# siblings of the first. Our packages' copies there are removed first.
CARGO_DIR="${CARGO_HOME:-$HOME/.cargo}"
for p in "${PACKAGES[@]}"; do
  rm -rf "$CARGO_DIR"/registry/src/-*/"$p-$VERSION" "$CARGO_DIR"/registry/cache/-*/"$p-$VERSION.crate"
done
# Nor does cargo rebuild a registry package whose sources changed under the
# same version: the verification builds (in the shared target dir) of the
# packages from that registry are marked stale, found by the sources their
# dep-info names; nothing else in target/ is touched.
for dep_info in $(grep -l "registry/src/-[0-9a-f]*/proto-ai-tools" target/debug/deps/*.d 2>/dev/null); do
  unit=$(basename "$dep_info" .d)
  name=${unit%-*}
  rm -rf "target/debug/.fingerprint/${name//_/-}-${unit##*-}"
done

echo "== cargo publish --dry-run ${PACKAGES[*]} (version $VERSION)"
args=()
for p in "${PACKAGES[@]}"; do args+=(-p "$p"); done
cargo publish --dry-run --allow-dirty "${args[@]}"

for p in "${PACKAGES[@]}"; do
  crate="target/package/$p-$VERSION.crate"
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
  manifest=$(tar xzOf "$crate" "$p-$VERSION/Cargo.toml")
  grep -q '^rust-version = ' <<<"$manifest" \
    || { echo "publish-check: $p has no rust-version" >&2; exit 1; }
done
# (Listings are read whole before grep -q: with pipefail, tar killed by the
# pipe grep -q closes early would fail the check.)
schema_listing=$(tar tzf "target/package/proto-ai-tools-schema-$VERSION.crate")
for f in ai/context/v1/annotations.proto ai/tools/v1/annotations.proto ai/tools/v1/rpc_tool.proto google/api/field_behavior.proto annotations.binpb buf.yaml; do
  grep -qx "proto-ai-tools-schema-$VERSION/proto/$f" <<<"$schema_listing" \
    || { echo "publish-check: proto-ai-tools-schema lacks proto/$f" >&2; exit 1; }
done

echo "== a fresh crate against the packaged files"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for p in "${PACKAGES[@]}"; do
  tar xzf "target/package/$p-$VERSION.crate" -C "$WORK"
done
APP="$WORK/links-agent"
mkdir -p "$APP/src" "$APP/proto/links/v1"
cp quickstart/proto/links/v1/links.proto "$APP/proto/links/v1/"
cat >"$APP/Cargo.toml" <<EOF
[package]
name = "links-agent"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
proto-ai-tools = "$VERSION"
serde_json = "1"

[patch.crates-io]
proto-ai-tools = { path = "../proto-ai-tools-$VERSION" }
proto-ai-tools-macros = { path = "../proto-ai-tools-macros-$VERSION" }
proto-ai-tools-schema = { path = "../proto-ai-tools-schema-$VERSION" }

# The workspace's profile, so that the shared target dir's dependencies are
# used again rather than built a second time.
[profile.dev]
debug = "line-tables-only"
[profile.dev.package."*"]
debug = false
EOF
cat >"$APP/src/main.rs" <<'EOF'
mod gentools {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

fn main() {
    for tool in gentools::all_tools() {
        let parameters: serde_json::Value =
            serde_json::from_str(tool.parameters()).expect("parameters are JSON");
        println!("{} {}", tool.name, parameters["type"]);
    }
}
EOF
# The workspace's lock file: the same versions as the workspace's own build
# (cargo drops what the fresh crate does not use).
cp Cargo.lock "$APP/Cargo.lock"
out=$(cd "$APP" && CARGO_TARGET_DIR="$ROOT/target" cargo run --quiet)
echo "$out"
grep -qx 'links_create "object"' <<<"$out" \
  || { echo "publish-check: the fresh crate did not print the tool links_create with an object schema" >&2; exit 1; }
echo "publish-check: ok"
