#!/usr/bin/env bash
# scripts/vm/aot.sh - build the kernel tier's ahead-of-time tree: a mirror of
# the repository in which src/, test/ and bench/ are transpiled to .js beside
# their .ts (esbuild, one file at a time: no bundling, no type check), every
# other top-level entry is a symbolic link to the repository's own, and
# package.json's ava configuration runs the .js test files (and its
# `require` files) without `--import=tsx`.
#
# Why: with `--import=tsx`, Node 20 starts a module-hooks worker thread in
# every test process, which loads and transforms the test's modules off the
# main thread. The kernel tier's SIGSEGV whose core was kept (2026-12-05) died in that thread
# (bench/README.md, "The kernel tier's crash hunt"). Test processes in the
# mirror have no such thread; a child a test starts with --import=tsx (on a
# .ts or a .js file) still works, the .ts files are there too.
#
# Usage:  bash scripts/vm/aot.sh DIR      (DIR is removed and made anew)
# Prints nothing on success; exits non-zero when esbuild fails.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:?usage: aot.sh DIR}
case $out in "$REPO"/?*) ;; *) echo "aot.sh: $out is not inside $REPO" >&2; exit 2 ;; esac
rm -rf "$out"
mkdir -p "$out"
cd "$REPO"
for entry in * .[!.]*; do
    case $entry in src | test | bench | package.json | .git | .cache | '.[!.]*') continue ;; esac
    [ -e "$entry" ] && ln -s "$REPO/$entry" "$out/$entry"
done
cp -r src test bench "$out/"
# The .ts files keep their place (children started with --import=tsx, and
# file names in messages); each gets its .js beside it.
find src test bench -name '*.ts' ! -name '*.d.ts' -print0 |
    xargs -0 node_modules/.bin/esbuild --log-level=warning --format=esm --platform=node \
        --target=node20 --sourcemap=inline --outbase=. --outdir="$out"
node -e '
const fs = require("node:fs");
const p = JSON.parse(fs.readFileSync("package.json", "utf8"));
const { extensions, nodeArguments, ...rest } = p.ava ?? {};
// files loaded before each test file (ava `require`): their transpiled .js
if (rest.require) rest.require = rest.require.map((f) => f.replace(/\.ts$/, ".js"));
p.ava = { ...rest, files: ["test/kernel/**/*.test.js"] };
fs.writeFileSync(process.argv[1] + "/package.json", JSON.stringify(p, null, 2) + "\n");
' "$out"
