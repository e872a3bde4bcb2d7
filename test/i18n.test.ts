import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { generateCatalogTypes, TYPES_FILE } from '../scripts/i18n-types.mjs';
import { FALLBACKS, isRegionalVariant, LOCALES, SURFACES, type Locale, type Surface } from '../src/i18n/locales.js';
import { CATALOGS, parseMessage, translator } from '../src/i18n/messages.js';

const SRC = new URL('../src/', import.meta.url);

function surfaceOf(key: string): Surface {
  const surface = key.split('.')[0] ?? '';
  assert.ok(
    Object.hasOwn(SURFACES, surface),
    `${key}: its first segment names a surface (${Object.keys(SURFACES).join(', ')})`,
  );
  return surface as Surface;
}

function speaks(locale: Locale, surface: Surface): boolean {
  return (SURFACES[surface] as readonly Locale[]).includes(locale);
}

/** A message's arguments and how each is used ("name:argument", "count:plural"), sorted. */
function argumentsOf(elements: MessageFormatElement[], into = new Set<string>()): Set<string> {
  for (const el of elements) {
    if (el.type === TYPE.literal || el.type === TYPE.pound || el.type === TYPE.tag) continue;
    into.add(`${el.value}:${TYPE[el.type]}`);
    if (el.type === TYPE.plural || el.type === TYPE.select) {
      for (const option of Object.values(el.options)) argumentsOf(option.value, into);
    }
  }
  return into;
}

const args = (message: string) => [...argumentsOf(parseMessage(message))].sort().join(', ');

describe('message catalogs', () => {
  it('has one catalog file per locale, and no other', () => {
    const files = readdirSync(new URL('i18n/locales/', SRC)).sort();
    assert.deepEqual(files, LOCALES.map((l) => `${l}.json`).sort());
  });

  it('parses every message of every locale as ICU MessageFormat, none empty', () => {
    for (const locale of LOCALES) {
      for (const [key, message] of Object.entries(CATALOGS[locale])) {
        assert.ok(message.trim() !== '', `${locale} ${key} is not empty`);
        assert.doesNotThrow(() => parseMessage(message), `${locale} ${key} parses: ${message}`);
      }
    }
  });

  it('gives each locale every key of English on the surfaces it speaks, and none English lacks', () => {
    for (const key of Object.keys(CATALOGS.en)) surfaceOf(key);
    for (const locale of LOCALES) {
      if (locale === 'en') continue;
      const has = new Set(Object.keys(CATALOGS[locale]));
      const extra = [...has].filter((key) => !Object.hasOwn(CATALOGS.en, key) || !speaks(locale, surfaceOf(key)));
      assert.deepEqual(extra, [], `${locale} has keys English lacks, or of a surface it does not speak`);
      if (isRegionalVariant(locale)) continue;
      const missing = Object.keys(CATALOGS.en).filter((key) => speaks(locale, surfaceOf(key)) && !has.has(key));
      assert.deepEqual(missing, [], `${locale} lacks keys of English`);
    }
  });

  it('gives every translation the arguments of the English message, used the same way', () => {
    for (const locale of LOCALES) {
      for (const [key, message] of Object.entries(CATALOGS[locale])) {
        assert.equal(args(message), args(CATALOGS.en[key] ?? ''), `${locale} ${key}: "${message}"`);
      }
    }
  });

  it('has a regional variant fall back to its base language, then English', () => {
    assert.deepEqual(FALLBACKS['es-MX'], ['es', 'en']);
    assert.ok(!Object.hasOwn(CATALOGS['es-MX'], 'cashier.page.copy'), 'es-MX does not say "copy" its own way');
    assert.equal(translator('cashier.page', 'es-MX')('copy'), translator('cashier.page', 'es')('copy'));
    assert.equal(translator('console.layout', 'sw')('overview'), translator('console.layout', 'en')('overview'));
  });

  it('writes plurals by each language’s rules', () => {
    const day = (locale: Locale, count: number) =>
      translator('console.overview', locale)('chartDay', { day: 'd', count, succeeded: 0 });
    assert.equal(day('en', 1), 'd: 1 order, 0 succeeded');
    assert.equal(day('en', 1500), 'd: 1,500 orders, 0 succeeded');
    assert.equal(day('pt-BR', 0), 'd: 0 pedidos, 0 com sucesso');
    assert.equal(day('pt-BR', 1), 'd: 1 pedido, 0 com sucesso');
    assert.equal(day('pt-BR', 1500), 'd: 1.500 pedidos, 0 com sucesso');
    assert.equal(day('es', 1), 'd: 1 pedido, 0 con éxito');
    assert.equal(day('es', 2), 'd: 2 pedidos, 0 con éxito');
    const resend = (locale: Locale, left: number) => translator('cashier.page', locale)('mpesaResend', { left });
    assert.equal(resend('en', 1), 'Send the request again (1 left)');
    assert.equal(resend('pt-BR', 1), 'Enviar o pedido de novo (resta 1)');
    assert.equal(resend('pt-BR', 2), 'Enviar o pedido de novo (restam 2)');
    assert.equal(resend('sw', 1), 'Tuma ombi tena (limebaki 1)');
    assert.equal(resend('es-MX', 2), 'Enviar la solicitud otra vez (quedan 2)');
  });

  it('has its generated types made from the English catalog as it is (npm run i18n:types)', async () => {
    assert.equal(readFileSync(TYPES_FILE, 'utf8'), await generateCatalogTypes());
  });

  it('uses every key somewhere in the code (a key built from data is matched by the template that builds it)', () => {
    const sources: string[] = [];
    const walk = (dir: URL) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) walk(new URL(`${entry.name}/`, dir));
        else if (entry.name.endsWith('.ts') && !dir.pathname.endsWith('/i18n/'))
          sources.push(readFileSync(new URL(entry.name, dir), 'utf8'));
      }
    };
    walk(SRC);
    const code = sources.join('\n');
    // Identifier-like literals only, so an apostrophe in a comment does not pair with a quote.
    const literals = new Set([...code.matchAll(/'([\w.-]+)'|"([\w.-]+)"/g)].map((m) => m[1] ?? m[2] ?? ''));
    const templates = [...code.matchAll(/`([^`\n]{1,100})`/g)]
      .map((m) => m[1] ?? '')
      .filter((text) => text.includes('${'))
      .map((text) => text.split(/\$\{[^}]*\}/))
      .filter((parts) => parts.join('').length >= 2)
      .map((parts) => new RegExp(`^${parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.+')}$`));
    const unused = Object.keys(CATALOGS.en).filter((key) => {
      const name = key.split('.').slice(2).join('.');
      return !literals.has(name) && !templates.some((template) => template.test(name));
    });
    assert.deepEqual(unused, [], 'keys no code names');
  });
});
