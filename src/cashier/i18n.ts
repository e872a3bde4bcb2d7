/**
 * What the payer reads: English, Brazilian Portuguese, Spanish and Swahili, and Mexican Spanish as
 * a regional variant of Spanish. A page's language is the payer's `?lang=` choice, else the first
 * supported language of Accept-Language, else the one of the order's currency. The words are in
 * the catalogs (`src/i18n/locales/`, namespace `cashier.page`).
 */
import { rankedLanguageTags } from '../http/language.js';
import { LOCALE_NAMES, SURFACES } from '../i18n/locales.js';
import { translator, type PlainKey, type Translator } from '../i18n/messages.js';

/** The languages a page offers in its links when it names none of its own. */
export const CASHIER_LANGUAGES = ['en', 'pt-BR', 'es', 'sw'] as const;
/** Every language a page can be read in (the cashier surface's): those offered, and Mexican Spanish for `es-MX` browsers and peso orders. */
export const CASHIER_LOCALES = SURFACES.cashier;
export type CashierLanguage = (typeof CASHIER_LOCALES)[number];

export const LANGUAGE_NAMES: Record<CashierLanguage, string> = LOCALE_NAMES;

/** The language of a currency's country, when the payer's browser names none we have. */
const CURRENCY_LANGUAGE: Record<string, CashierLanguage> = { BRL: 'pt-BR', MXN: 'es-MX', KES: 'en' };

/**
 * The languages a page of a country offers in its language links: the country's own and English.
 * Brazil: Portuguese and English; Kenya: English and Swahili; the USDT page (priced in reais, paid
 * from a wallet anywhere): English, Portuguese and Spanish; Mexico (SPEI and OXXO): Mexican Spanish
 * and English. A page in another language (chosen by the browser or `?lang=`) still links to these.
 */
export const PAGE_LANGUAGES = {
  brazil: ['pt-BR', 'en'],
  kenya: ['en', 'sw'],
  usdt: ['en', 'pt-BR', 'es'],
  mexico: ['es-MX', 'en'],
} as const satisfies Record<string, readonly CashierLanguage[]>;

/**
 * The time zone each kind of page gives its deadlines and receipt times in, with the abbreviation
 * shown beside them (none of these zones has daylight saving time, so one abbreviation holds all
 * year): Brazil's pages in Brasília time, Kenya's in East Africa time, Mexico's in central Mexico
 * time (Mexico City, UTC-6: Mexico abolished daylight saving time in October 2022, so "CST" holds
 * all year), the USDT page in UTC (its payers may be anywhere; the chain's own times are UTC).
 */
export const PAGE_TIME_ZONES = {
  brazil: { zone: 'America/Sao_Paulo', label: 'BRT' },
  kenya: { zone: 'Africa/Nairobi', label: 'EAT' },
  usdt: { zone: 'UTC', label: 'UTC' },
  mexico: { zone: 'America/Mexico_City', label: 'CST' },
} as const;

export type PageCountry = keyof typeof PAGE_TIME_ZONES;

function isCashierLanguage(value: unknown): value is CashierLanguage {
  return typeof value === 'string' && (CASHIER_LOCALES as readonly string[]).includes(value);
}

export function pickLanguage(input: {
  query?: unknown;
  acceptLanguage?: string | undefined;
  currency: string;
}): CashierLanguage {
  if (isCashierLanguage(input.query)) return input.query;
  for (const tag of rankedLanguageTags(input.acceptLanguage)) {
    const primary = tag.split('-')[0];
    if (primary === 'pt') return 'pt-BR';
    if (tag === 'es-mx') return 'es-MX';
    if (primary === 'es' || primary === 'en' || primary === 'sw') return primary;
  }
  return CURRENCY_LANGUAGE[input.currency] ?? 'en';
}

/** The cashier's texts: the catalogs' `cashier.page` namespace. */
export type Translate = Translator<'cashier.page'>;
/** A key of a text without arguments (labels chosen from data). */
export type TextKey = PlainKey<'cashier.page'>;

export function cashierTranslator(lang: CashierLanguage): Translate {
  return translator('cashier.page', lang);
}

/**
 * An amount as the payer's language writes it, from its exact decimal text (never a float):
 * "R$ 1.234,56" in Portuguese, "R$1,234.56" in English, "KES 1,500" in English, "$1,234.50 MXN" in
 * Mexican Spanish (the peso sign, and its code so it is not read as dollars).
 */
export function formatAmount(lang: CashierLanguage, decimalText: string, currency: string): string {
  // As many decimals as the amount has: KES in whole shillings, reais in cents, a rate in its own places.
  const decimals = decimalText.split('.')[1]?.length ?? 0;
  const pesos = lang === 'es-MX' && currency === 'MXN';
  const format = formatter(
    `n|${lang}|${currency}|${decimals}`,
    () =>
      new Intl.NumberFormat(lang, {
        style: 'currency',
        currency,
        currencyDisplay: currency === 'BRL' || pesos ? 'narrowSymbol' : 'code',
        minimumFractionDigits: decimals,
        maximumFractionDigits: decimals,
        // Spanish leaves 4-digit amounts ungrouped ("1234,56"); reais are written "1.234,56".
        ...(lang === 'es' && { useGrouping: 'always' as const }),
      }),
  );
  // Intl formats a decimal string exactly (no conversion to a binary float).
  const value = decimalText as unknown as number;
  // Spanish puts the symbol after the number ("42,50 R$"); a payer reads reais as Brazil writes
  // them, symbol first ("R$ 42,50"), with Spanish's own separators.
  if (lang === 'es') {
    const parts = format.formatToParts(value);
    const symbol = parts.find((p) => p.type === 'currency')?.value ?? currency;
    const number = parts
      .filter((p) => p.type !== 'currency')
      .map((p) => p.value)
      .join('')
      .trim();
    return `${symbol} ${number}`.replace(/\u00a0/g, ' ');
  }
  const text = format.format(value).replace(/\u00a0/g, ' ');
  return pesos ? `${text} MXN` : text;
}

/**
 * A moment with its date, time and zone, as a payer of the page's country reads it:
 * "25 Nov 2026, 01:48 (BRT)" in English, "25 de nov. de 2026, 01:48 (BRT)" in Portuguese.
 */
export function formatDeadline(lang: CashierLanguage, ms: number, country: PageCountry): string {
  const { zone, label } = PAGE_TIME_ZONES[country];
  const text = formatter(
    `dt|${lang}|${zone}`,
    () =>
      new Intl.DateTimeFormat(dateLocale(lang), {
        day: 'numeric',
        month: 'short',
        year: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
        timeZone: zone,
      }),
  ).format(new Date(ms));
  return `${text.replace(/\u202f|\u00a0/g, ' ')} (${label})`;
}

/** The locale dates are written in: English day first ("25 Nov 2026", "26/11/2026"), as Kenya and Brazil write it, never the US month first. */
function dateLocale(lang: CashierLanguage): string {
  return lang === 'en' ? 'en-GB' : lang;
}

/** A date in the currency's time zone: "26/11/2026" in Portuguese and English. */
export function formatDate(lang: CashierLanguage, isoDate: string): string {
  return formatter(
    `d|${lang}`,
    () =>
      new Intl.DateTimeFormat(dateLocale(lang), { day: '2-digit', month: '2-digit', year: 'numeric', timeZone: 'UTC' }),
  ).format(new Date(`${isoDate}T00:00:00Z`));
}

/** Intl formatters are costly to make and few differ (languages × currencies × decimals): each is made once. */
const formatters = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();

function formatter<F extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, make: () => F): F {
  const known = formatters.get(key) as F | undefined;
  if (known !== undefined) return known;
  const made = make();
  formatters.set(key, made);
  return made;
}
