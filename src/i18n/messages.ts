/**
 * Every text Cashgate renders, from the locale catalogs, compiled once when this module loads.
 *
 * A page module takes a translator for its namespace and names its keys:
 * `const t = translator('console.keys', lang); t('labelHint', { max: 100 })`. The catalog holds the
 * words, in ICU MessageFormat: `{name}` arguments, `{count, plural, one {# order} other {# orders}}`,
 * `{kind, select, …}`, `{n, number}`, `{at, date, medium}`. A key that does not exist, or a call
 * without one of the message's arguments, fails the type-check (`catalog-types.ts` is generated from
 * the English catalog by `npm run i18n:types`).
 *
 * Messages made only of text and plain arguments (nearly all) are compiled to a concatenation;
 * the others (plurals, selects, number and date formats) to an `IntlMessageFormat` built once
 * from the parsed message, so a page pays no parsing and no formatter construction.
 */
import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { IntlMessageFormat } from 'intl-messageformat';
import type { Catalog } from './catalog-types.js';
import en from './locales/en.json' with { type: 'json' };
import es from './locales/es.json' with { type: 'json' };
import esMX from './locales/es-MX.json' with { type: 'json' };
import ptBR from './locales/pt-BR.json' with { type: 'json' };
import sw from './locales/sw.json' with { type: 'json' };
import { FALLBACKS, LOCALES, type Locale } from './locales.js';

export type { Catalog } from './catalog-types.js';
export type Namespace = keyof Catalog;
export type MessageKey<N extends Namespace> = keyof Catalog[N] & string;
/** A message's arguments: `never` for a message that takes none. */
export type MessageArgs<N extends Namespace, K extends MessageKey<N>> = Catalog[N][K];
/** The keys of a namespace whose messages take no arguments (for keys chosen from data). */
export type PlainKey<N extends Namespace> = {
  [K in MessageKey<N>]: [Catalog[N][K]] extends [never] ? K : never;
}[MessageKey<N>];
type ArgsParam<A> = [A] extends [never] ? [] : [args: A];

/** The texts of one namespace in one locale: `t('created')`, `t('labelHint', { max })`. */
export type Translator<N extends Namespace> = <K extends MessageKey<N>>(
  key: K,
  ...args: ArgsParam<MessageArgs<N, K>>
) => string;

/** The catalogs as translators and tools read them: flat keys to ICU messages, one file per locale. */
export const CATALOGS: Readonly<Record<Locale, Readonly<Record<string, string>>>> = {
  en,
  'pt-BR': ptBR,
  es,
  'es-MX': esMX,
  sw,
};

/** Parses a message as the catalogs are written: ICU MessageFormat, with `<` as plain text (no rich-text tags). */
export function parseMessage(message: string): MessageFormatElement[] {
  return parse(message, { ignoreTag: true, requiresOtherClause: true });
}

type Values = Readonly<Record<string, string | number | Date>>;
type Compiled = (values: Values) => string;

function compile(message: string, locale: Locale): Compiled {
  const ast = parseMessage(message);
  const plain = ast.every((el) => el.type === TYPE.literal || el.type === TYPE.argument);
  if (!plain) {
    const format = new IntlMessageFormat(ast, locale, undefined, { ignoreTag: true });
    return (values) => String(format.format(values));
  }
  if (ast.every((el) => el.type === TYPE.literal)) {
    const text = ast.map((el) => el.value).join('');
    return () => text;
  }
  const parts = ast.map((el) => (el.type === TYPE.literal ? { text: el.value } : { arg: el.value }));
  return (values) => {
    let out = '';
    for (const part of parts) {
      if (part.text !== undefined) out += part.text;
      else {
        const value = values[part.arg];
        if (value === undefined) throw new Error(`the message argument {${part.arg}} was not given`);
        // A plain argument is text or a number (catalog-types.ts), written as String() writes it.
        out += String(value);
      }
    }
    return out;
  };
}

/** Each catalog's messages compiled once, in the catalog's own locale. */
const OWN = new Map(
  LOCALES.map((locale) => [
    locale,
    Object.entries(CATALOGS[locale]).map(([key, message]) => [key, compile(message, locale)] as const),
  ]),
);

/** Every key of every locale, its fallbacks' messages under its own: `COMPILED[locale][key]`. */
const COMPILED = new Map(
  LOCALES.map((locale) => [
    locale,
    new Map(
      [...FALLBACKS[locale]]
        .reverse()
        .concat(locale)
        .flatMap((source) => OWN.get(source) ?? []),
    ),
  ]),
);

type Untyped = (key: string, values?: Values) => string;
const translators = new Map<string, Untyped>();
const NO_VALUES: Values = {};

/** The translator of a namespace in a locale (made once per pair). */
export function translator<N extends Namespace>(namespace: N, locale: Locale): Translator<N> {
  const id = `${namespace}|${locale}`;
  let made = translators.get(id);
  if (made === undefined) {
    const compiled = COMPILED.get(locale);
    const prefix = `${namespace}.`;
    const messages = new Map<string, Compiled>();
    for (const [key, format] of compiled ?? [])
      if (key.startsWith(prefix)) messages.set(key.slice(prefix.length), format);
    made = (key, values) => {
      const format = messages.get(key);
      if (format === undefined) throw new Error(`no message ${prefix}${key}`);
      return format(values ?? NO_VALUES);
    };
    translators.set(id, made);
  }
  // The catalog's types (checked by test/i18n.test.ts against the catalogs) are what it is called with.
  return made as Translator<N>;
}

/** A text in each of the given locales (an order's errorMsg in every language a merchant may read). */
export function inEach<L extends Locale>(locales: readonly L[], text: (locale: L) => string): Record<L, string> {
  return Object.fromEntries(locales.map((locale) => [locale, text(locale)])) as Record<L, string>;
}

/** Whether a namespace has a message of that name (for keys that come from data, such as a permission's name). */
export function hasMessage<N extends Namespace>(namespace: N, key: string): key is MessageKey<N> {
  return Object.hasOwn(CATALOGS.en, `${namespace}.${key}`);
}
