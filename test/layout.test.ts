import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const CHECK = join(import.meta.dirname, '..', 'scripts', 'check-module-cycles.mjs');
const PRETTIER = join(import.meta.dirname, '..', 'node_modules', 'prettier', 'bin', 'prettier.cjs');

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'cashgate-layout-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the module layout stays acyclic and formatted', () => {
  it('finds no import cycle between the folders of src/', () => {
    const out = execFileSync(process.execPath, [CHECK, join(import.meta.dirname, '..', 'src')], { encoding: 'utf8' });
    assert.match(out, /module cycles: none among \d+ modules/);
  });

  it('fails on a cycle between two folders, type-only imports included, and names the files', () => {
    const root = tree({
      'src/a/one.ts': "import type { B } from '../b/two.js';\nexport type A = B;\n",
      'src/b/two.ts': "import { a } from '../a/three.js';\nexport type B = string;\nexport const b = a;\n",
      'src/a/three.ts': 'export const a = 1;\n',
      'src/c/leaf.ts': "import { a } from '../a/three.js';\nexport const c = a;\n",
    });
    const run = spawnSync(process.execPath, [CHECK, join(root, 'src')], { encoding: 'utf8' });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /module cycle among 2 modules: a, b/);
    assert.match(run.stderr, /a → b {2}\(a\/one\.ts → \.\.\/b\/two\.js\)/);
    assert.doesNotMatch(run.stderr, /\bc\b.*→/);
  });

  it('passes a tree whose folders only import downwards', () => {
    const root = tree({
      'src/a/one.ts': "import { b } from '../b/two.js';\nexport const a = b;\n",
      'src/b/two.ts': 'export const b = 1;\n',
    });
    const run = spawnSync(process.execPath, [CHECK, join(root, 'src')], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
  });

  it('the formatter check refuses code that is not in the project format, and passes it once formatted', () => {
    const config = join(import.meta.dirname, '..', '.prettierrc.json');
    const root = tree({ 'bad.ts': 'const  x = {a:1,\n b:"two"}\nexport default x\n' });
    const file = join(root, 'bad.ts');
    const check = spawnSync(process.execPath, [PRETTIER, '--config', config, '--check', file], { encoding: 'utf8' });
    assert.equal(check.status, 1);
    execFileSync(process.execPath, [PRETTIER, '--config', config, '--write', file]);
    const again = spawnSync(process.execPath, [PRETTIER, '--config', config, '--check', file], { encoding: 'utf8' });
    assert.equal(again.status, 0, again.stderr);
  });
});
