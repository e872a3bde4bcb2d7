/** Pieces of markup the console's forms and pages share: fields tied to their errors, summaries, notices. */
import { html, type Html } from '../http/html.js';
import type { Language } from '../http/language.js';
import { translator } from '../i18n/messages.js';

/** A problem with one field of a form: shown in the summary (linked to the field) and beside the field. */
export interface FieldError {
  field: string;
  message: string;
}

/** The list of a form's problems, focused by the page's script so a screen reader reads it first. */
export function errorSummary(lang: Language, errors: readonly FieldError[]): Html {
  if (errors.length === 0) return html``;
  return html`<div class="summary" role="alert" tabindex="-1"><p class="error">${translator('console.forms', lang)('problem')}</p><ul>${errors.map(
    (e) => html`<li><a href="#${e.field}">${e.message}</a></li>`,
  )}</ul></div>`;
}

export interface FieldInput {
  name: string;
  label: string;
  type?: 'text' | 'email' | 'password' | 'url' | 'date' | 'search' | 'datetime-local';
  value?: string | undefined;
  hint?: string | undefined;
  errors?: readonly FieldError[];
  required?: boolean;
  autocomplete?: string;
  inputmode?: 'numeric' | 'text';
  maxlength?: number;
}

/** A labelled input; its error (if any) is announced with it. */
export function textField(input: FieldInput): Html {
  const error = input.errors?.find((e) => e.field === input.name);
  const described = [
    input.hint !== undefined ? `${input.name}-hint` : '',
    error !== undefined ? `${input.name}-error` : '',
  ]
    .filter((s) => s !== '')
    .join(' ');
  return html`<label for="${input.name}">${input.label}</label>${
    input.hint !== undefined ? html`<p class="muted" id="${input.name}-hint">${input.hint}</p>` : ''
  }${
    error !== undefined ? html`<p class="error" id="${input.name}-error">${error.message}</p>` : ''
  }<input type="${input.type ?? 'text'}" id="${input.name}" name="${input.name}" value="${input.value ?? ''}"${input.required === true ? html` required` : ''}${
    input.autocomplete !== undefined ? html` autocomplete="${input.autocomplete}"` : ''
  }${input.inputmode !== undefined ? html` inputmode="${input.inputmode}"` : ''}${input.maxlength !== undefined ? html` maxlength="${input.maxlength}"` : ''}${
    described !== '' ? html` aria-describedby="${described}"` : ''
  }${error !== undefined ? html` aria-invalid="true"` : ''}>`;
}

/** A confirmation after a form did its work (shown once, after the redirect). */
export function notice(text: string | undefined): Html {
  return text === undefined || text === '' ? html`` : html`<p class="notice" role="status">${text}</p>`;
}

/** A console address with the given query parameters, empty ones left out. */
export function linkWith(path: string, params: Record<string, string>): string {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '')).toString();
  return query === '' ? path : `${path}?${query}`;
}

/** A short coloured label: ok (green), bad (red), wait (amber) or plain. */
export function badge(text: string, tone: 'ok' | 'bad' | 'wait' | 'plain' = 'plain'): Html {
  return html`<span class="badge${tone === 'plain' ? '' : ` ${tone}`}">${text}</span>`;
}

/** A copy button for the element with id `target` (shown only when script runs). */
export function copyButton(target: string, lang: Language): Html {
  const t = translator('console.forms', lang);
  return html`<button type="button" class="secondary" data-copy="${target}" data-copied="${t('copied')}" hidden>${t('copy')}</button>`;
}

/** A UTC calendar day (YYYY-MM-DD) as the millisecond range it covers; undefined when it is no such day. */
export function dayStart(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value ? undefined : ms;
}

export const DAY_MS = 86_400_000;

/** The labels of a pair of date fields. */
export function dayRangeLabels(lang: Language): { from: string; to: string } {
  const t = translator('console.dates', lang);
  return { from: t('from'), to: t('to') };
}

/**
 * Two date fields (UTC days, `to` included) as the range [from, until) in milliseconds. An empty
 * field leaves its end open unless the range is required; every problem names its field.
 */
export function dayRange(
  lang: Language,
  input: { from: string; to: string; required: boolean; fromField?: string; toField?: string },
): { range?: { from?: number; until?: number }; errors: FieldError[] } {
  const t = translator('console.dates', lang);
  const errors: FieldError[] = [];
  const read = (value: string, field: string, label: string): number | undefined => {
    if (value === '') {
      if (input.required) errors.push({ field, message: t('dateRequired', { field: label }) });
      return undefined;
    }
    const ms = dayStart(value);
    if (ms === undefined) errors.push({ field, message: t('dateBad', { field: label }) });
    return ms;
  };
  const toField = input.toField ?? 'to';
  const from = read(input.from, input.fromField ?? 'from', t('from'));
  const to = read(input.to, toField, t('to'));
  if (from !== undefined && to !== undefined && to < from)
    errors.push({ field: toField, message: t('dateOrder', { field: t('to'), from: t('from') }) });
  if (errors.length > 0) return { errors };
  return { range: { ...(from !== undefined && { from }), ...(to !== undefined && { until: to + DAY_MS }) }, errors };
}

/** The UTC day of a moment, as an <input type=date> value. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
