/** CSV cells as the console's exports write them (the balance statement, the orders): RFC 4180, formula-safe. */

/** A CSV cell (RFC 4180): quoted when it holds a quote, comma or line break. */
export function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** A text cell a spreadsheet must not read as a formula: a leading ' when it starts with = + - @ tab or CR. */
export function csvText(value: string): string {
  return csvCell(/^[=+\-@\t\r]/.test(value) ? `'${value}` : value);
}
