/**
 * No import cycles in src/ (DESIGN.md section 2: each layer knows only the
 * ones below it). The import graph of every src/**\/*.ts file: static
 * imports and re-exports, type-only ones included (a cycle of types is still
 * two files that know each other; `madge --circular` counts them too), and
 * dynamic `import()` of a literal path. Every strongly connected component of
 * more than one file, or a file that imports itself, is a cycle and fails
 * the test, listed.
 */
import test from 'ava';
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/** The relative modules a file imports at run time, resolved to .ts files under src/. */
function importsOf(file: string, text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specs: string[] = [];
  // import x from '...'; import { a } from '...'; import '...'; export { a } from '...'; export * from '...'
  for (const m of code.matchAll(/^\s*(import|export)\s+(type\s+)?([^'";]*?from\s+)?['"]([^'"]+)['"]/gm)) {
    if (m[1] === 'export' && !m[3]) continue;
    specs.push(m[4]);
  }
  for (const m of code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) specs.push(m[1]);
  return specs
    .filter((s) => s.startsWith('.'))
    .map((s) => {
      const p = resolve(dirname(file), s.replace(/\.js$/, '.ts'));
      return existsSync(p) ? p : existsSync(join(p, 'index.ts')) ? join(p, 'index.ts') : p;
    });
}

/** Strongly connected components (Tarjan) of more than one node, or with a self-edge. */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

test('the cycle finder finds a cycle it is shown, and none in a chain', (t) => {
  t.deepEqual(
    cycles(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a']],
        ['d', ['a']],
      ]),
    ),
    [['a', 'b', 'c']],
  );
  t.deepEqual(
    cycles(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', []],
      ]),
    ),
    [],
  );
  t.deepEqual(cycles(new Map([['a', ['a']]])), [['a']]);
  const f = join(SRC, 'x', 'y.ts');
  t.deepEqual(
    importsOf(
      f,
      "import type { A } from './a.js';\nimport { b } from './b.js';\nexport * from '../c.js';\nexport type { D } from './d.js';\nconst m = () => import('./e.js');\n// import { z } from './z.js';",
    ),
    [join(SRC, 'x', 'a.ts'), join(SRC, 'x', 'b.ts'), join(SRC, 'c.ts'), join(SRC, 'x', 'd.ts'), join(SRC, 'x', 'e.ts')],
  );
});

test('src/ has no import cycle', (t) => {
  const graph = new Map<string, string[]>();
  for (const f of tsFiles(SRC)) graph.set(f, importsOf(f, readFileSync(f, 'utf8')));
  t.true(graph.size > 50, `found ${graph.size} files`);
  const found = cycles(graph).map((c) => c.map((f) => relative(SRC, f)).join(' <-> '));
  t.deepEqual(found, [], `import cycles:\n${found.join('\n')}`);
});
