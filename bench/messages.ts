// What a text costs a page, per message, measured in one run against its floor: the same words
// written by a template literal in code.
//   - floor: `Pay ${merchant}` as code;
//   - the mechanism before the catalogs: a [en, pt-BR, es] tuple and a `{name}` regular-expression fill;
//   - a catalog message of text and arguments (nearly all of them): compiled to a concatenation at start;
//   - a catalog message with a plural: an IntlMessageFormat built once at start;
//   - the same plain message through an IntlMessageFormat (what it would cost without the concatenation).
// And what start-up pays: every message of every catalog parsed and compiled.
//   npm run bench:messages        (BENCH_ITERATIONS, default 2,000,000 calls per case)
import { IntlMessageFormat } from 'intl-messageformat';
import { CATALOGS, parseMessage, translator } from '../src/i18n/messages.js';
import { LOCALES } from '../src/i18n/locales.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 2_000_000);
let sink = 0;

function nsPerCall(run: (n: number) => string): number {
  for (let n = 0; n < 100_000; n++) sink += run(n).length; // warm-up
  const start = process.hrtime.bigint();
  for (let n = 0; n < ITERATIONS; n++) sink += run(n).length;
  return Number(process.hrtime.bigint() - start) / ITERATIONS;
}

const merchants = ['Loja Azul', 'Duka la Juma', 'Tienda Roja'];
const tuple = ['Pay {merchant}', 'Pagar {merchant}', 'Pagar a {merchant}'] as const;
const fill = (text: string, params: Record<string, string>) =>
  text.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? (params[name] ?? whole) : whole));
const t = translator('cashier.page', 'pt-BR');
const overview = translator('console.overview', 'pt-BR');
const viaIntl = new IntlMessageFormat(CATALOGS['pt-BR']['cashier.page.payMerchant'] ?? '', 'pt-BR', undefined, {
  ignoreTag: true,
});

const cases: [string, (n: number) => string][] = [
  ['floor: template literal in code', (n) => `Pagar ${merchants[n % 3] ?? ''}`],
  ['tuple + {name} fill (before the catalogs)', (n) => fill(tuple[1], { merchant: merchants[n % 3] ?? '' })],
  ['catalog, text and argument (concatenation)', (n) => t('payMerchant', { merchant: merchants[n % 3] ?? '' })],
  ['catalog, plural (IntlMessageFormat)', (n) => overview('chartDay', { day: 'seg', count: n % 5, succeeded: 1 })],
  ['same plain message through IntlMessageFormat', (n) => String(viaIntl.format({ merchant: merchants[n % 3] ?? '' }))],
];

const results = cases.map(([name, run]) => ({ name, ns: nsPerCall(run) }));
const floor = results[0]?.ns ?? 1;
console.log(`${ITERATIONS} calls per case; ratios to the floor (first row)`);
console.log(`${'case'.padEnd(48)} ${'ns/call'.padStart(8)} ${'÷floor'.padStart(8)}`);
for (const r of results)
  console.log(`${r.name.padEnd(48)} ${r.ns.toFixed(1).padStart(8)} ${(r.ns / floor).toFixed(2).padStart(8)}`);

let count = 0;
const start = process.hrtime.bigint();
for (const locale of LOCALES) {
  for (const message of Object.values(CATALOGS[locale])) {
    new IntlMessageFormat(parseMessage(message), locale, undefined, { ignoreTag: true });
    count++;
  }
}
const ms = Number(process.hrtime.bigint() - start) / 1e6;
console.log(`start-up: ${count} messages parsed and each made an IntlMessageFormat in ${ms.toFixed(1)} ms`);
if (sink === 0) console.log('');
