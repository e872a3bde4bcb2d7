/**
 * Text for the standard PDF fonts: made drawable (the fonts cover WinAnsi only) and wrapped into
 * lines of a given width.
 */

/** Letters the standard fonts lack that Unicode does not decompose. */
const FALLBACKS: Record<string, string> = {
  ł: 'l',
  Ł: 'L',
  đ: 'd',
  Đ: 'D',
  ħ: 'h',
  ı: 'i',
  ø: 'o',
  Ø: 'O',
  '‐': '-',
  '‑': '-',
  '‒': '-',
  '―': '-',
  '−': '-',
};

/**
 * Text the font can draw: characters outside its set (Helvetica: WinAnsi) lose their accents
 * (ő → o), take a look-alike, or become "?"; control characters become spaces.
 */
export function drawableText(text: string, charset: ReadonlySet<number>): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (/\p{Cc}/u.test(char)) out += ' ';
    else if (charset.has(code)) out += char;
    else {
      const base = Array.from(char.normalize('NFD'))
        .filter((c) => !/\p{M}/u.test(c) && charset.has(c.codePointAt(0) ?? 0))
        .join('');
      out += base !== '' ? base : (FALLBACKS[char] ?? '?');
    }
  }
  return out;
}

/**
 * Splits one paragraph into lines that `fits`, at spaces where it can and inside a word too long for
 * a line where it must; an empty paragraph is one empty line.
 */
export function wrapText(text: string, fits: (line: string) => boolean): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (fits(candidate)) {
      line = candidate;
      continue;
    }
    if (line !== '') lines.push(line);
    line = '';
    for (const char of word) {
      if (line !== '' && !fits(line + char)) {
        lines.push(line);
        line = '';
      }
      line += char;
    }
  }
  lines.push(line);
  return lines;
}
