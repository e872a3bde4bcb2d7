/**
 * The locales Cashgate's texts are written in, and which surface speaks which. Every text lives in
 * one catalog per locale (`locales/<locale>.json`, ICU MessageFormat, flat keys); a key's first
 * segment names its surface.
 */
export const LOCALES = ['en', 'pt-BR', 'es', 'es-MX', 'sw'] as const;
export type Locale = (typeof LOCALES)[number];

/**
 * A regional variant holds only the texts its region says differently; every other text is its
 * base language's. English is the last resort of every locale.
 */
export const FALLBACKS: Readonly<Record<Locale, readonly Locale[]>> = {
  en: [],
  'pt-BR': ['en'],
  es: ['en'],
  'es-MX': ['es', 'en'],
  sw: ['en'],
};

/** Whether a locale's catalog holds only the texts it changes (the rest come from its fallbacks). */
export function isRegionalVariant(locale: Locale): boolean {
  return FALLBACKS[locale].length > 1;
}

/**
 * The surfaces and the locales each is translated into: a complete catalog of a locale holds every
 * key of each surface listed for it, and none of another surface.
 * - `console`: the merchant console (and the failure texts it shows).
 * - `cashier`: the payer's pages, the boleto and the receipt.
 * - `api`: the merchant API's failure messages and the order and exchange failure reasons
 *   callbacks carry, in the merchant's language.
 * - `document`: the PDFs Brazilian banks and payers read: the payment receipt (endpoint 17), in
 *   Portuguese and English side by side, and the boleto, in Portuguese only with FEBRABAN's field
 *   names (its English catalog is the translators' gloss).
 * - `backoffice`: the payment company's staff pages under /backoffice.
 */
export const SURFACES = {
  console: ['en', 'pt-BR', 'es'],
  cashier: ['en', 'pt-BR', 'es', 'es-MX', 'sw'],
  api: ['en', 'pt-BR', 'es'],
  document: ['en', 'pt-BR'],
  backoffice: ['en', 'pt-BR', 'es'],
} as const satisfies Record<string, readonly Locale[]>;

export type Surface = keyof typeof SURFACES;

export const LOCALE_NAMES: Readonly<Record<Locale, string>> = {
  en: 'English',
  'pt-BR': 'Português',
  es: 'Español',
  'es-MX': 'Español (México)',
  sw: 'Kiswahili',
};

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}
