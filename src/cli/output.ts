import { ConfigError } from '../config.js';
import { DataDirInUseError } from '../store/dir-lock.js';
import { OperatorError } from '../admin/failures.js';
import { ApiError, describeFailure } from '../http/failures.js';

/** Bad command-line use: exit code 64 (EX_USAGE). */
export class UsageError extends Error {
  constructor(
    message: string,
    /** `usage` for a wrong command line, `invalid_request` for a value the admin API's schema refuses. */
    readonly code: 'usage' | 'invalid_request' = 'usage',
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export const EXIT_USAGE = 64;
export const EXIT_CONFIG = 78;

/** What a failed command prints on standard error (the admin API's error format) and its exit code. */
export function failureOf(error: unknown): { body: { error: { code: string; message: string } }; exitCode: number } {
  const failure = (code: string, message: string, exitCode: number) => ({
    body: { error: { code, message } },
    exitCode,
  });
  if (error instanceof UsageError) return failure(error.code, error.message, EXIT_USAGE);
  if (error instanceof ConfigError) return failure('invalid_configuration', error.message, EXIT_CONFIG);
  if (error instanceof DataDirInUseError) return failure(error.code, error.message, 1);
  // The admin API answers these with 400 invalid_request and the same message.
  if (error instanceof ApiError)
    return failure('invalid_request', describeFailure(error.failure, 'en').text, EXIT_USAGE);
  // Values the admin API refuses with 400 are bad input here too; a missing or conflicting thing is 1.
  if (error instanceof OperatorError)
    return failure(error.failure.kind, error.message, error.status === 400 ? EXIT_USAGE : 1);
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
    return failure('usage', (error as Error).message, EXIT_USAGE);
  }
  return failure('internal_error', error instanceof Error ? error.message : String(error), 1);
}

/** One JSON document on standard output. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A table for people: a header row, then one row per item, columns padded to line up. */
export function printTable(columns: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = columns.map((column, i) => Math.max(column.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${[line(columns), ...rows.map(line)].join('\n')}\n`);
}

/** A moment for people: ISO 8601 in UTC, to the second. */
export function isoTime(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
