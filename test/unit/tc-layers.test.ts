/**
 * The structure of src/tc and src/netlink (issue #11, structure 3, 4, 6):
 * no import cycles (value imports; `import type` is erased), tc's
 * operations split by object the way iproute2 splits them, no exit codes
 * and no errno or flag numbers compared in these layers.
 */
import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Relative imports and re-exports that load a module at run time (not `import type` / `export type`). */
function valueImports(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of src.matchAll(/^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"](\.[^'"]+)['"]/gm)) {
    out.push(resolve(dirname(file), m[1].replace(/\.js$/, '.ts')));
  }
  return out;
}

/** Every cycle found by a depth-first walk, as "a -> b -> a". */
function cycles(files: string[]): string[] {
  const graph = new Map(files.map((f) => [f, valueImports(f).filter((d) => existsSync(d))]));
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const found: string[] = [];
  const visit = (n: string): void => {
    state.set(n, 1);
    stack.push(n);
    for (const d of graph.get(n) ?? []) {
      if (!graph.has(d)) continue;
      if (state.get(d) === 1) found.push([...stack.slice(stack.indexOf(d)), d].map((x) => relative(root, x)).join(' -> '));
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
  return found;
}

test('src/tc and src/netlink (route/ included) have no import cycles', (t) => {
  const files = [...tsFiles(join(root, 'src/tc')), ...tsFiles(join(root, 'src/netlink'))];
  t.deepEqual(cycles(files), []);
});

test('the cycle finder finds a cycle, and ignores type-only imports', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sp-cycles-'));
  writeFileSync(join(dir, 'a.ts'), "import { b } from './b.js';\nexport const a = b;\n");
  writeFileSync(join(dir, 'b.ts'), "export { a as c } from './a.js';\nexport const b = 1;\n");
  writeFileSync(join(dir, 'c.ts'), "import type { a } from './a.js';\nimport { b } from './b.js';\nexport const c: typeof a = b;\n");
  try {
    const found = cycles(tsFiles(dir));
    t.is(found.length, 1);
    t.regex(found[0], /a\.ts -> .*b\.ts -> .*a\.ts/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('tc operations are split by object: request builders, qdisc, class, filter, explanations; plug verbs in plug-control.ts, kind files are codecs', (t) => {
  for (const f of ['request', 'qdisc', 'class', 'filter', 'explain', 'device']) t.true(existsSync(join(root, `src/tc/${f}.ts`)), f);
  t.false(existsSync(join(root, 'src/tc/ops.ts')), 'the 718-line ops.ts is gone');
  const plug = readFileSync(join(root, 'src/tc/plug-control.ts'), 'utf8');
  for (const v of ['plugBuffer', 'plugReleaseOne', 'plugReleaseIndefinite', 'plugSetLimit', 'plugRequest'])
    t.regex(plug, new RegExp(`export function ${v}\\b`), v);
  // a kind file encodes, decodes and prints; it never talks to the kernel
  for (const dir of ['kinds', 'filters', 'actions'])
    for (const f of tsFiles(join(root, 'src/tc', dir)))
      t.notRegex(readFileSync(f, 'utf8'), /\.request\(|from '\.\.\/(device|explain|qdisc|class|filter)\.js'/, relative(root, f));
  // explain.ts reads the request's fields, never the encoded bytes
  const explain = readFileSync(join(root, 'src/tc/explain.ts'), 'utf8');
  t.notRegex(explain, /payload\[0\]\.read/);
  t.notRegex(explain, /sch_\$\{|cls_\$\{/);
});

test('no exit codes, errno numbers or bare flag numbers in src/tc and src/netlink/route', (t) => {
  const files = [...tsFiles(join(root, 'src/tc')), ...tsFiles(join(root, 'src/netlink/route'))].filter(
    (f) => !/src\/tc\/(actions\/|filters\/(flower|u32)\.ts)/.test(f),
  ); // IN's files
  for (const f of files) {
    const src = readFileSync(f, 'utf8');
    const name = relative(root, f);
    t.notRegex(src, /exitCode|EXIT_/, name);
    if (name.startsWith('src/tc/')) t.notRegex(src, /as \{ category/, `${name}: an error's category is set by its class, never through a cast`);
    t.notRegex(src, /\.errno\s*[!=]==?\s*\d/, name);
    t.notRegex(src, /case\s+\d+\s*:\s*case\s+\d+\s*:/, name);
    t.notRegex(src, /\b(?:E[A-Z]+)\s*=\s*\d+\s*;/, name);
    t.notRegex(src, /flags\s*\|\s*0x[0-9a-f]+\b/i, name);
  }
});
