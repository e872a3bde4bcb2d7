/**
 * What `npm pack` would publish of packages/sdk: the built code with its types, the sources its
 * maps point at, a README and a license, and nothing else; publishable metadata; no runtime
 * dependency.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';

const SDK = fileURLToPath(new URL('../packages/sdk/', import.meta.url));

interface PackEntry {
  files: { path: string }[];
}

interface Manifest {
  name: string;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  types?: string;
  main?: string;
  exports?: Record<string, { types?: string; default?: string } | string>;
  dependencies?: Record<string, string>;
}

describe('the @cashgate/sdk package', () => {
  let packed: Set<string>;
  let manifest: Manifest;

  before(() => {
    const bin = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const build = spawnSync(process.execPath, [bin, '-b', SDK], { encoding: 'utf8' });
    assert.equal(build.status, 0, `the SDK builds: ${build.stdout}${build.stderr}`);
    const out = execFileSync('npm', ['pack', '--dry-run', '--json'], {
      cwd: SDK,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [entry] = JSON.parse(out) as PackEntry[];
    assert.ok(entry !== undefined, 'npm pack describes one package');
    packed = new Set(entry.files.map((f) => f.path));
    manifest = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8')) as Manifest;
  });

  it('ships the built code, its types, the sources, a README and a license, and nothing else', () => {
    for (const file of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'src/index.ts'])
      assert.ok(packed.has(file), `${file} is shipped`);
    for (const file of packed) {
      assert.match(
        file,
        /^(package\.json|README\.md|LICENSE|dist\/[a-z-]+\.(js|d\.ts|js\.map)|src\/[a-z-]+\.ts)$/,
        `${file} belongs in the package`,
      );
      const built = /^dist\/([a-z-]+)\.js$/.exec(file);
      if (built !== null) {
        assert.ok(packed.has(`dist/${built[1] ?? ''}.d.ts`), `${file} has its types`);
        assert.ok(packed.has(`src/${built[1] ?? ''}.ts`), `${file} has its source`);
      }
    }
  });

  it('has source maps that point at shipped files', () => {
    const maps = [...packed].filter((f) => f.endsWith('.map'));
    assert.ok(maps.length > 0, 'source maps are shipped');
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(join(SDK, map), 'utf8')) as { sources: string[] };
      for (const source of sources) {
        const target = posix.normalize(posix.join(dirname(map), source));
        assert.ok(packed.has(target), `${map} points at ${target}, which is shipped`);
      }
    }
  });

  it('has publishable metadata and no runtime dependency', () => {
    assert.equal(manifest.name, '@cashgate/sdk');
    assert.equal(manifest.license, 'MIT');
    assert.ok(
      manifest.repository?.url !== undefined && manifest.repository.directory === 'packages/sdk',
      'a repository',
    );
    const root = manifest.exports?.['.'];
    assert.ok(typeof root === 'object', 'an exports map');
    for (const file of [manifest.types, manifest.main, root.types, root.default]) {
      assert.ok(file !== undefined && packed.has(posix.normalize(file)), `${String(file)} is shipped`);
    }
    assert.deepEqual(manifest.dependencies ?? {}, {}, 'no runtime dependencies');
    const imports = [...packed]
      .filter((f) => f.startsWith('dist/') && f.endsWith('.js'))
      .flatMap((f) => [...readFileSync(join(SDK, f), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1] ?? ''));
    const foreign = imports.filter((spec) => !spec.startsWith('./') && !spec.startsWith('node:'));
    assert.deepEqual(foreign, [], 'the built code imports only its own files and Node built-ins');
  });

  it('has a README whose quick start is at most 20 lines', () => {
    const readme = readFileSync(join(SDK, 'README.md'), 'utf8');
    const quickStart = /## Quick start[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(quickStart !== undefined, 'the README has a quick start in TypeScript');
    const lines = quickStart.trimEnd().split('\n').length;
    assert.ok(lines <= 20, `the quick start has ${lines} lines`);
    assert.match(quickStart, /new CashgateClient\(/, 'it makes a client');
    assert.match(quickStart, /verifyCallback[<(]/, 'it verifies a callback');
    const checked = readFileSync(new URL('./fixtures/sdk-program/quick-start.ts', import.meta.url), 'utf8');
    assert.equal(quickStart, checked, 'the quick start is the file test/sdk-program.test.ts type-checks');
  });
});
