import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function readVersion(): string {
  // dist/src/version.js and src/version.ts both sit two levels below package.json or one.
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      const pkg = require(candidate) as { name?: string; version?: string };
      if (pkg.name === 'cashgate' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}

/** The service version reported by /ping and in the callback User-Agent. */
export const SERVICE_VERSION = readVersion();
