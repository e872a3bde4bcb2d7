export const LANGUAGES = ['en', 'pt-BR', 'es'] as const;
export type Language = (typeof LANGUAGES)[number];

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

/** The language tags of an Accept-Language header, lower-cased, best first (weight, then order); q=0 left out. */
export function rankedLanguageTags(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const weight = q === undefined ? 1 : Number(q.slice(2));
      return { tag: tag.trim().toLowerCase(), weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((entry) => entry.tag !== '' && entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
    .map((entry) => entry.tag);
}

/** Picks the best supported language from an Accept-Language header; English when none fits. */
export function languageFromAcceptLanguage(header: string | undefined): Language {
  for (const tag of rankedLanguageTags(header)) {
    const primary = tag.split('-')[0];
    if (primary === 'pt') return 'pt-BR';
    if (primary === 'es') return 'es';
    if (primary === 'en') return 'en';
  }
  return 'en';
}
