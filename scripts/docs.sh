#!/usr/bin/env bash
# The API reference: one DocC archive per library product, .build/docs/MODULE.doccarchive, from
# the symbol graphs of the modules the build made (run after scripts/test.sh's build). Fails on
# any DocC warning (a broken ``symbol`` link, a documented parameter that does not exist, ...).
set -euo pipefail
cd "$(dirname "$0")/.."

# docc and swift-symbolgraph-extract come with the toolchain, beside swift.
tools=$(dirname "$(readlink -f "$(command -v swift)")")
bin=$(swift build --show-bin-path)
manifest="$bin/../debug.yaml"
[ -f "$manifest" ] || manifest=.build/debug.yaml
out=.build/docs
graphs=.build/docs-symbol-graphs
rm -rf "$out" "$graphs"
mkdir -p "$out"

# The library products' modules, from Package.swift.
modules=$(swift package dump-package | python3 -c '
import json, sys
package = json.load(sys.stdin)
names = [t for p in package["products"] if "library" in p["type"] for t in p["targets"]]
print("\n".join(dict.fromkeys(names)))')

# The flags the build compiled MODULE with that find its imports (module and include paths,
# C module maps), read from the build manifest.
compile_flags() {
  python3 - "$1" "$manifest" <<'PY'
import json, re, sys
module, manifest = sys.argv[1], sys.argv[2]
found = re.search(r'"C\.' + re.escape(module) + r'-[^"]*\.module":\n(?:[ \t].*\n)*?[ \t]+args: (\[.*\])\n',
                  open(manifest).read())
if not found:
    sys.exit(f"docs.sh: {module} is not in {manifest} (build first)")
args, flags, i = json.loads(found.group(1)), [], 0
while i < len(args):
    if args[i] in ("-I", "-Xcc", "-target", "-module-cache-path") and i + 1 < len(args):
        flags += args[i:i + 2]
        i += 2
        continue
    if args[i].startswith("-I"):
        flags.append(args[i])
    i += 1
print("\0".join(flags), end="")
PY
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
for module in $modules; do
  mkdir -p "$graphs/$module"
  mapfile -d '' flags < <(compile_flags "$module")
  "$tools/swift-symbolgraph-extract" -module-name "$module" "${flags[@]}" -minimum-access-level public \
    -skip-synthesized-members -output-dir "$graphs/$module"
  if ! "$tools/docc" convert --additional-symbol-graph-dir "$graphs/$module" --fallback-display-name "$module" \
    --fallback-bundle-identifier "parley.$module" --output-dir "$out/$module.doccarchive" >"$log" 2>&1; then
    cat "$log" >&2
    status=1
  elif grep -q "warning:" "$log"; then
    cat "$log" >&2
    echo "docs.sh: $module: $(grep -c 'warning:' "$log") DocC warnings (above)" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "docs.sh: $(echo "$modules" | wc -w) modules documented in $out"
exit "$status"
