/**
 * The frame of every back-office page: the console's style and script (one look for Cashgate's web
 * pages) with a few additions, a staff-coloured header so that nobody mistakes it for a merchant's
 * console, and a navigation that lists only the pages the operator's role may see.
 */
import type { FastifyReply } from 'fastify';
import { BACKOFFICE_PAGE_ACCESS, roleCan, type BackofficePage, type Role } from '../access/permissions.js';
import { CONSOLE_LANGUAGE_NAMES, CONSOLE_LANGUAGES } from '../console/i18n.js';
import { CONSOLE_SCRIPT, CONSOLE_STYLE } from '../console/layout.js';
import { escapeXml, html, pageHeaders, strictCsp, type Html } from '../http/html.js';
import type { Language } from '../http/language.js';
import { translator } from '../i18n/messages.js';

const STYLE =
  CONSOLE_STYLE +
  `header{background:#3b0a45}header nav a{color:#f5e1fa}header nav a[aria-current=page]{background:#7e22ce}
header .menu nav a{border-bottom-color:#581c87}
.counts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,14rem),1fr));gap:.75rem;margin:0;padding:0;list-style:none}
.counts li{background:#fff;border:1px solid var(--line);border-radius:.5rem;padding:.6rem .8rem;min-width:0}
.counts li.attention{border-left:4px solid var(--warn)}.counts .figure{font-size:1.5rem;font-weight:700;font-variant-numeric:tabular-nums}
.timeline{list-style:none;margin:0;padding:0}.timeline>li{border-left:3px solid var(--line);padding:.25rem 0 .75rem .9rem;position:relative;min-width:0}
.timeline>li::before{content:"";position:absolute;left:-.45rem;top:.55rem;width:.6rem;height:.6rem;border-radius:50%;background:#7e22ce}
.timeline .kind{font-weight:700}.timeline pre{max-height:16rem;overflow:auto}
.inline{display:inline}.actions form{display:inline-block;margin-right:.5rem}

.twocol{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,22rem),1fr));gap:1rem}.twocol>*{min-width:0}
.qr svg{width:12rem;height:12rem;display:block}
`.replace(/\n/g, '');

export const BACKOFFICE_CSP = strictCsp(STYLE, CONSOLE_SCRIPT);

/** The pages in the navigation, in order. */
const NAV: readonly [BackofficePage, string][] = [
  ['today', '/backoffice'],
  ['orders', '/backoffice/orders'],
  ['queues', '/backoffice/queues'],
  ['merchants', '/backoffice/merchants'],
  ['money', '/backoffice/money'],
  ['operators', '/backoffice/operators'],
  ['audit', '/backoffice/audit'],
  ['system', '/backoffice/system'],
];

export interface BackofficeFrame {
  section: BackofficePage | undefined;
  operatorName: string;
  role: Role;
  csrfToken: string;
  /** The request's path and query, where the language form comes back to. */
  path: string;
}

export interface BackofficePageInput {
  lang: Language;
  title: string;
  body: Html;
  /** Absent on the sign-in pages. */
  frame?: BackofficeFrame;
  /** On a page without a frame: the token its language form carries (the sign-in form's, or the half-open session's). */
  formToken?: string;
  /** On a page without a frame: where the language form comes back to (default the sign-in page). */
  back?: string;
  now: number;
}

/** The hidden field every back-office form carries. */
export const csrfField = (token: string): Html => html`<input type="hidden" name="_csrf" value="${token}">`;

export function sendBackofficePage(reply: FastifyReply, status: number, page: BackofficePageInput): FastifyReply {
  const t = translator('backoffice.layout', page.lang);
  const frame = page.frame;
  const visible =
    frame === undefined ? [] : NAV.filter(([p]) => roleCan(frame.role, BACKOFFICE_PAGE_ACCESS[p].permission));
  const links = html`${visible.map(
    ([section, href]) =>
      html`<a href="${href}"${section === frame?.section ? html` aria-current="page"` : ''}>${t(section)}</a>`,
  )}`;
  const here = frame?.section === undefined ? '' : html` <span class="here">· ${t(frame.section)}</span>`;
  const header =
    frame === undefined
      ? html`<header><div class="bar"><span class="brand">${t('brand')}</span></div></header>`
      : html`<header><div class="bar"><a class="brand" href="/backoffice">${t('brand')}</a>
<nav class="row" aria-label="${t('mainNav')}">${links}</nav>
<details class="menu"><summary>${t('menu')}${here}</summary><nav aria-label="${t('mainNav')}">${links}</nav></details>
<div class="who"><span>${frame.operatorName} · ${t('role', { role: frame.role })}</span><form method="post"
action="/backoffice/sign-out">${csrfField(frame.csrfToken)}<button type="submit" class="secondary">${t('signOut')}</button></form></div></div></header>`;
  const languages = html`<footer><form method="post" action="/backoffice/language">${csrfField(
    frame?.csrfToken ?? page.formToken ?? '',
  )}<input type="hidden" name="back" value="${frame?.path ?? page.back ?? '/backoffice/sign-in'}"><span>${t('language')}:</span> ${CONSOLE_LANGUAGES.map(
    (l) =>
      html`<button type="submit" name="lang" value="${l}" class="secondary" lang="${l}"${
        l === page.lang ? html` aria-pressed="true"` : ''
      }>${CONSOLE_LANGUAGE_NAMES[l]}</button> `,
  )}</form></footer>`;
  return pageHeaders(reply.code(status), BACKOFFICE_CSP, 'same-origin').send(
    `<!doctype html><html lang="${page.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
      `<meta name="robots" content="noindex"><title>${escapeXml(page.title)} · ${escapeXml(t('brand'))}</title><style>${STYLE}</style></head>` +
      `<body data-now="${page.now}">${header.text}<main id="main">${page.body.text}</main>${languages.text}<script>${CONSOLE_SCRIPT}</script></body></html>`,
  );
}
