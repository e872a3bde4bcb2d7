/**
 * The console's languages (the merchant API's: English, Brazilian Portuguese, Spanish), how a
 * request picks one, and the amounts and times its pages write. The words are in the catalogs
 * (`src/i18n/locales/`, namespaces `console.*`).
 */
import { formatAmount } from '../cashier/i18n.js';
import { isLanguage, LANGUAGES, rankedLanguageTags, type Language } from '../http/language.js';
import { LOCALE_NAMES } from '../i18n/locales.js';
import { CURRENCIES, formatMinor } from '../money.js';

export const CONSOLE_LANGUAGES = LANGUAGES;
export const CONSOLE_LANGUAGE_NAMES: Record<Language, string> = LOCALE_NAMES;

/** `?lang=` when it names a console language, else the browser's first console language, else English. */
export function languageOfRequest(query: unknown, acceptLanguage: string | undefined, fallback?: Language): Language {
  if (isLanguage(query)) return query;
  if (fallback !== undefined) return fallback;
  for (const tag of rankedLanguageTags(acceptLanguage)) {
    const primary = tag.split('-')[0];
    if (primary === 'pt') return 'pt-BR';
    if (primary === 'es' || primary === 'en') return primary;
  }
  return 'en';
}

/** An amount in minor units as the language writes it: "R$ 1.234,56", "KES 1,500". Exact: never a float. */
export function money(lang: Language, minor: bigint | number, currency: string): string {
  const decimals = (CURRENCIES as Record<string, number>)[currency] ?? 2;
  return formatAmount(lang, formatMinor(BigInt(minor), decimals), currency);
}

/** Minor units as plain decimal text ("1234.56"), for CSV files and form values. */
export function decimalText(minor: bigint | number, currency: string): string {
  return formatMinor(BigInt(minor), (CURRENCIES as Record<string, number>)[currency] ?? 2);
}

const dateTimeFormats = new Map<Language, Intl.DateTimeFormat>();

/** A moment as the language writes it, in UTC (the console's one time zone): "23 Nov 2026, 19:05:03 UTC". */
export function dateTime(lang: Language, ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  let format = dateTimeFormats.get(lang);
  if (format === undefined) {
    format = new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' });
    dateTimeFormats.set(lang, format);
  }
  return `${format.format(new Date(ms))} UTC`;
}
