/**
 * Server-rendered HTML, shared by the cashier pages and the merchant console: a template tag that
 * escapes every interpolated value, and the security headers of a page whose only style and script
 * are inline and allowed by their SHA-256 hashes.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** Text content for XML and HTML: markup characters escaped, characters XML 1.0 forbids dropped. */
export function escapeXml(text: string): string {
  return text
    .replace(/[^\t\n\r\x20-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu, '')
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** Markup that is already safe: the only thing `html` inserts without escaping. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type Part = Html | string | number | bigint | undefined | null | false | readonly Part[];

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return (part as readonly Part[]).map(render).join('');
  return escapeXml(String(part));
}

/** A template of markup: every interpolated value is escaped unless it is Html already. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  return new Html(strings.reduce((out, text, i) => out + text + (i < values.length ? render(values[i]) : ''), ''));
}

/** Trusted markup made elsewhere (an SVG renderer's output). */
export const trusted = (markup: string): Html => new Html(markup);

/** The CSP source of an inline style or script. */
export const cspHash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * Only the page's own inline style and script, same-origin fetches and forms; no frames, no plugins,
 * no base.
 */
export function strictCsp(style: string, script: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspHash(style)}`,
    `script-src ${cspHash(script)}`,
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The headers every server-rendered page carries: its CSP, never cached, never framed, and no
 * referrer to other sites (`same-origin` keeps the Origin header on the console's own forms).
 */
export function pageHeaders(
  reply: FastifyReply,
  csp: string,
  referrer: 'no-referrer' | 'same-origin' = 'no-referrer',
): FastifyReply {
  return reply
    .header('content-security-policy', csp)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', referrer)
    .header('permissions-policy', 'camera=(), microphone=(), geolocation=(), payment=()')
    .type('text/html; charset=utf-8');
}
