#!/usr/bin/env node
// Fails when the folders of src/ import each other in a cycle (type-only imports count too: a
// layer that names another's types depends on it). A top-level file of src/ is a module of its own.
// Usage: node scripts/check-module-cycles.mjs [src-dir] [--graph]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const args = process.argv.slice(2);
const root = resolve(args.find((a) => !a.startsWith('--')) ?? 'src');

/** The module a file belongs to: its first folder under src/, or the top-level file's name. */
function moduleOf(file) {
  const parts = relative(root, file).split(sep);
  return parts.length === 1 ? parts[0].replace(/\.ts$/, '') : parts[0];
}

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** module → module → the first file-level import that makes the edge (for the message). */
const edges = new Map();
for (const file of sourceFiles(root)) {
  const from = moduleOf(file);
  if (!edges.has(from)) edges.set(from, new Map());
  for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const target = resolve(dirname(file), match[1] ?? match[2]);
    if (!target.startsWith(root + sep)) continue;
    const to = moduleOf(target.replace(/\.js$/, '.ts'));
    if (to !== from && !edges.get(from).has(to))
      edges.get(from).set(to, `${relative(root, file)} → ${match[1] ?? match[2]}`);
  }
}

// Tarjan's strongly connected components: every component of more than one module is a cycle.
let index = 0;
const stack = [];
const state = new Map();
const components = [];
function visit(v) {
  state.set(v, { index, low: index, onStack: true });
  index += 1;
  stack.push(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!state.has(w)) {
      visit(w);
      state.get(v).low = Math.min(state.get(v).low, state.get(w).low);
    } else if (state.get(w).onStack) {
      state.get(v).low = Math.min(state.get(v).low, state.get(w).index);
    }
  }
  if (state.get(v).low === state.get(v).index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      state.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1) components.push(component.sort());
  }
}
for (const v of [...edges.keys()].sort()) if (!state.has(v)) visit(v);

if (args.includes('--graph')) {
  for (const [from, to] of [...edges].sort()) console.log(`${from} → ${[...to.keys()].sort().join(', ')}`);
}
if (components.length === 0) {
  console.log(`module cycles: none among ${edges.size} modules of ${relative(process.cwd(), root) || '.'}`);
} else {
  for (const component of components) {
    console.error(`module cycle among ${component.length} modules: ${component.join(', ')}`);
    const inside = new Set(component);
    for (const from of component) {
      for (const [to, via] of edges.get(from)) if (inside.has(to)) console.error(`  ${from} → ${to}  (${via})`);
    }
  }
  process.exitCode = 1;
}
