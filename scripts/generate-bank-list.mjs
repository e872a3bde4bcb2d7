// Regenerates src/banks/br-banks.json from the bancos-brasileiros package (a JSON compilation of
// Banco Central do Brasil's participant lists: COMPE code, ISPB, name). Run after upgrading it:
//   node scripts/generate-bank-list.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkgPath = require.resolve('bancos-brasileiros/package.json');
const { version } = JSON.parse(readFileSync(pkgPath, 'utf8'));
const raw = readFileSync(require.resolve('bancos-brasileiros/bancos.json'), 'utf8').replace(/^\uFEFF/, '');
const source = JSON.parse(raw);

const banks = source
  .map((b) => ({ code: b.COMPE, ispb: b.ISPB, name: b.LongName.trim(), shortName: b.ShortName.trim() }))
  .sort((a, b) => a.code.localeCompare(b.code) || a.ispb.localeCompare(b.ispb));

const names = new Set(banks.map((b) => b.name));
if (names.size !== banks.length) throw new Error('bank names are not unique');
for (const b of banks) {
  if (!/^\d{3}$/.test(b.code) || !/^\d{8}$/.test(b.ispb)) throw new Error(`bad bank entry ${JSON.stringify(b)}`);
}
const updated = source
  .map((b) => b.DateUpdated)
  .sort()
  .at(-1)
  .slice(0, 10);

writeFileSync(
  new URL('../src/banks/br-banks.json', import.meta.url),
  `${JSON.stringify(
    {
      source: `bancos-brasileiros ${version} (Banco Central do Brasil participant lists: COMPE, ISPB, names)`,
      sourceUpdated: updated,
      banks,
    },
    null,
    1,
  )}\n`,
);
console.log(`wrote ${banks.length} banks (source updated ${updated})`);
