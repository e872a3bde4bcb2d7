/**
 * The frame of every console page: server-rendered HTML with its one style and one script inline,
 * allowed by their hashes in a strict Content-Security-Policy; a navigation row on a desktop and a
 * "Menu" disclosure (<details>, no script needed) on a phone; every page usable without script
 * (the script adds copy buttons, live countdowns and confirmations).
 */
import type { FastifyReply } from 'fastify';
import { escapeXml, html, pageHeaders, strictCsp, type Html } from '../http/html.js';
import type { Language } from '../http/language.js';
import { translator } from '../i18n/messages.js';
import { CONSOLE_LANGUAGE_NAMES, CONSOLE_LANGUAGES, dateTime } from './i18n.js';

export const CONSOLE_STYLE = `
:root{color-scheme:light;--ink:#111827;--muted:#4b5563;--line:#d1d5db;--accent:#0b4f9c;--ok:#065f46;--bad:#991b1b;--warn:#78350f;--soft:#f3f4f6}
*{box-sizing:border-box}[hidden]{display:none!important}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--soft)}
header{background:#0f2742;color:#fff}
header .bar{max-width:80rem;margin:0 auto;padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center}
header .brand{font-weight:700;color:#fff;text-decoration:none;margin-right:.5rem}
header nav{display:flex;flex-wrap:wrap;gap:.15rem .25rem;flex:1}
header nav a{color:#dbeafe;text-decoration:none;padding:.35rem .5rem;border-radius:.35rem}
header nav a[aria-current=page]{background:#1e40af;color:#fff}
header .menu{display:none}
header .menu summary{cursor:pointer;list-style:none;display:flex;align-items:center;gap:.5rem;padding:.45rem .75rem;
min-height:44px;border:1px solid #94a3b8;border-radius:.4rem;color:#fff;font-weight:600}
header .menu summary::-webkit-details-marker{display:none}
header .menu summary::before{content:"\\2630"/"";font-size:1.1rem}
header .menu[open] summary::before{content:"\\2715"/""}
header .menu summary .here{font-weight:400;color:#cbd5e1}
header .menu nav{flex-direction:column;flex-wrap:nowrap;gap:0;margin:.35rem 0 .25rem}
header .menu nav a{display:block;padding:.6rem .75rem;min-height:44px;border-bottom:1px solid #1e3a5f}
.perms{margin:0;padding-left:1.1rem}.perms li{margin:.1rem 0}
.checks.wide{grid-template-columns:repeat(auto-fill,minmax(min(100%,17rem),1fr))}
.perm p{margin:0 0 .4rem 1.5rem;font-size:.85rem}
.when{white-space:nowrap;font-size:.85rem;color:var(--muted)}
table.reqlog td.nowrap{white-space:nowrap}table.reqlog td.msg{min-width:14rem;overflow-wrap:anywhere;white-space:normal}
.retry{white-space:nowrap;font-size:.85rem}
header .who{font-size:.85rem;color:#cbd5e1;display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}
header .who button{min-height:0;padding:.25rem .6rem;margin:0;font-size:.85rem;background:transparent;color:#fff;border-color:#94a3b8}
main{max-width:80rem;margin:0 auto;padding:1rem}
.panel{background:#fff;border:1px solid var(--line);border-radius:.6rem;padding:1rem 1.25rem;margin:0 0 1rem}
.narrow{max-width:28rem;margin:2rem auto}
h1{font-size:1.4rem;margin:.25rem 0 1rem}h2{font-size:1.1rem;margin:0 0 .75rem}
p{margin:.5rem 0}.muted{color:var(--muted);font-size:.9rem}
a{color:var(--accent)}
label{display:block;font-weight:600;margin:.6rem 0 .2rem}
input[type=text],input[type=email],input[type=password],input[type=url],input[type=date],input[type=search],input[type=datetime-local],select,textarea{
font:inherit;width:100%;max-width:40rem;padding:.5rem;border:2px solid #6b7280;border-radius:.4rem;color:var(--ink);
background:#fff}
textarea{font:13px/1.4 ui-monospace,Menlo,Consolas,monospace;min-height:8rem}
input[aria-invalid=true],textarea[aria-invalid=true],select[aria-invalid=true]{border-color:var(--bad)}
.check{display:flex;gap:.4rem;align-items:center;font-weight:400;margin:.25rem 0}.check input{width:1.1rem;height:1.1rem}
.checks{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:0 1rem}
fieldset{border:1px solid var(--line);border-radius:.5rem;padding:.5rem 1rem;margin:.75rem 0}legend{font-weight:600;padding:0 .25rem}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:.5rem 1rem;margin:.5rem .4rem .25rem 0;
border-radius:.4rem;border:2px solid var(--accent);background:var(--accent);color:#fff;text-decoration:none;
cursor:pointer;min-height:40px}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}
button.danger{background:var(--bad);border-color:var(--bad)}
button:focus-visible,a:focus-visible,input:focus-visible,textarea:focus-visible,select:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(10rem,1fr));gap:0 .75rem;align-items:end}
.table{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{background:#f9fafb;white-space:nowrap}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code,.mono{font:13px/1.4 ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
pre{font:13px/1.4 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-all;background:#f9fafb;
border:1px solid var(--line);border-radius:.4rem;padding:.5rem;margin:.25rem 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:.5rem 0}
dt{font-weight:600;color:var(--muted)}dd{margin:0;min-width:0;overflow-wrap:anywhere}
.notice{border-left:4px solid var(--ok);background:#ecfdf5;padding:.5rem .75rem;margin:0 0 1rem;border-radius:.25rem}
.warning{border-left:4px solid var(--warn);background:#fffbeb;padding:.5rem .75rem;margin:.5rem 0;border-radius:.25rem}
.error{color:var(--bad);font-weight:600}
.summary{border:2px solid var(--bad);border-radius:.5rem;padding:.5rem 1rem;margin:0 0 1rem;background:#fff}
.badge{display:inline-block;padding:.05rem .45rem;border-radius:1rem;font-size:.8rem;font-weight:600;background:#e5e7eb;white-space:nowrap}
.badge.ok{background:#d1fae5;color:var(--ok)}.badge.bad{background:#fee2e2;color:var(--bad)}.badge.wait{background:#fef3c7;color:var(--warn)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:1rem}.cards>*{min-width:0}
.cards dd.num{white-space:nowrap}.cards.wide{grid-template-columns:repeat(auto-fit,minmax(min(100%,24rem),1fr))}
.pager{display:flex;gap:1rem;margin-top:.75rem}
.secret{font:15px/1.4 ui-monospace,Menlo,Consolas,monospace;word-break:break-all;background:#fffbeb;
border:2px solid var(--warn);padding:.5rem;border-radius:.4rem}
footer{max-width:80rem;margin:0 auto;padding:0 1rem 2rem;font-size:.85rem}footer form{display:inline}
footer button{min-height:0;padding:.2rem .5rem;font-size:.85rem}
@media (max-width:40rem){header nav.row{display:none}header .menu{display:block;flex:0 0 100%;order:3}
main{padding:.5rem}.panel{padding:.75rem}dl{grid-template-columns:1fr}dt{margin-top:.35rem}h1{font-size:1.25rem}}
td.date{white-space:nowrap}
.stat .figure{font-size:1.75rem;font-weight:700;margin:.1rem 0;font-variant-numeric:tabular-nums}
.chart{margin:0 0 1rem}.chart svg{display:block;width:100%;max-width:40rem;height:auto}
.legend{font-size:.85rem;color:var(--muted);display:flex;flex-wrap:wrap;gap:.25rem .5rem;align-items:center}
.swatch{display:inline-block;width:.9rem;height:.9rem;border-radius:.15rem}
.swatch.all{background:#bfdbfe;border:1.5px solid #1d4ed8}.swatch.ok{background:#065f46}
.cards.stats{grid-template-columns:repeat(auto-fit,minmax(min(100%,13rem),1fr))}.steps li{margin:.2rem 0}
.steps a{display:inline-block;min-height:24px}
.paused{border:2px solid var(--bad);border-left-width:6px;background:#fef2f2;padding:.6rem .9rem;margin:0 0 1rem;border-radius:.4rem}
.paused p{margin:.25rem 0}
`.replace(/\n/g, '');

/**
 * Progressive enhancement only: copy buttons, countdowns to a moment (`data-until`, corrected by
 * the server's clock in `data-now`), and a confirmation on forms that change something for good.
 */
export const CONSOLE_SCRIPT = `(function(){
var d=document,skew=Number(d.body.getAttribute('data-now'))-Date.now();
d.querySelectorAll('[data-copy]').forEach(function(btn){btn.hidden=false;btn.addEventListener('click',function(){
var el=d.getElementById(btn.getAttribute('data-copy'));if(!el)return;var text=el.value!==undefined?el.value:el.textContent;
var done=function(){var old=btn.textContent;btn.textContent=btn.getAttribute('data-copied');setTimeout(function(){btn.textContent=old},2000)};
if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(text).then(done,function(){
el.select&&el.select()})}else{el.select&&el.select();try{d.execCommand('copy');done()}catch(e){}}});});
d.querySelectorAll('[data-until]').forEach(function(el){
var end=Number(el.getAttribute('data-until')),tpl=el.getAttribute('data-template'),over=el.getAttribute('data-over');
var tick=function(){var s=Math.ceil((end-(Date.now()+skew))/1000);if(s<=0){el.textContent=over;
el.className=el.getAttribute('data-over-class')||el.className;return}el.textContent=tpl.replace('{s}',String(s));
setTimeout(tick,1000-((Date.now()+skew)%1000))};tick();});
d.querySelectorAll('form[data-confirm]').forEach(function(f){f.addEventListener('submit',function(e){
if(!window.confirm(f.getAttribute('data-confirm')))e.preventDefault()})});
var sm=d.querySelector('.summary');if(sm)sm.focus();
})();`;

export const CONSOLE_CSP = strictCsp(CONSOLE_STYLE, CONSOLE_SCRIPT);

export type NavSection =
  'overview' | 'keys' | 'callbacks' | 'orders' | 'balances' | 'signature' | 'requests' | 'account';

const NAV: readonly [NavSection, string][] = [
  ['overview', '/console'],
  ['keys', '/console/keys'],
  ['callbacks', '/console/callbacks'],
  ['orders', '/console/orders'],
  ['balances', '/console/balances'],
  ['signature', '/console/signature'],
  ['requests', '/console/requests'],
  ['account', '/console/account'],
];

export interface ConsolePageInput {
  lang: Language;
  title: string;
  body: Html;
  /** The signed-in user's frame (navigation, sign-out, language); absent on the sign-in pages. */
  frame?: {
    section: NavSection | undefined;
    merchantName: string;
    userName: string;
    csrfToken: string;
    path: string;
    /** Since when the operator paused the merchant's payments and payouts (null: not paused): a notice on every page. */
    paused?: { payments: number | null; payouts: number | null };
  };
  /** The server's clock, for the countdowns. */
  now: number;
  /** Language links on a page without a session (the sign-in page): its path. */
  languageLinksPath?: string;
}

/** The hidden field every console form carries. */
export const csrfField = (token: string): Html => html`<input type="hidden" name="_csrf" value="${token}">`;

/** The notice of the operator's pauses, on top of every page of a paused merchant (nothing when none). */
function pauseNotice(lang: Language, paused: { payments: number | null; payouts: number | null } | undefined): Html {
  if (paused === undefined || (paused.payments === null && paused.payouts === null)) return html``;
  const t = translator('console.pause', lang);
  const lines = (['payments', 'payouts'] as const).flatMap((what) => {
    const since = paused[what];
    return since === null ? [] : [html`<p>${t(what, { since: dateTime(lang, since) })}</p>`];
  });
  return html`<section class="paused" id="paused" aria-labelledby="paused-title"><h2 id="paused-title">${t('title')}</h2>
${lines}<p>${t('contact')}</p></section>`;
}

export function sendConsolePage(reply: FastifyReply, status: number, page: ConsolePageInput): FastifyReply {
  const t = translator('console.layout', page.lang);
  const frame = page.frame;
  // One list of links, shown as a row on a desktop and inside the "Menu" disclosure on a phone (the
  // other one is display:none, so assistive technology meets one navigation at a time).
  const links =
    frame === undefined
      ? html``
      : html`${NAV.map(([section, href]) => html`<a href="${href}"${section === frame.section ? html` aria-current="page"` : ''}>${t(section)}</a>`)}`;
  const here = frame?.section === undefined ? '' : html` <span class="here">· ${t(frame.section)}</span>`;
  const header =
    frame === undefined
      ? html`<header><div class="bar"><span class="brand">${t('console')}</span></div></header>`
      : html`<header><div class="bar"><a class="brand" href="/console">${t('console')}</a>
<nav class="row" aria-label="${t('mainNav')}">${links}</nav>
<details class="menu"><summary>${t('menu')}${here}</summary><nav aria-label="${t('mainNav')}">${links}</nav></details>
<div class="who"><span>${frame.userName} · ${frame.merchantName}</span><form method="post"
action="/console/sign-out">${csrfField(frame.csrfToken)}<button type="submit" class="secondary">${t('signOut')}</button></form></div></div></header>`;
  const languages =
    frame !== undefined
      ? html`<footer><form method="post" action="/console/language">${csrfField(frame.csrfToken)}<input type="hidden" name="back"
value="${frame.path}"><span>${t('language')}:</span> ${CONSOLE_LANGUAGES.map(
          (l) =>
            html`<button type="submit" name="lang" value="${l}"
class="secondary" lang="${l}"${l === page.lang ? html` aria-pressed="true"` : ''}>${CONSOLE_LANGUAGE_NAMES[l]}</button> `,
        )}</form></footer>`
      : html`<footer><span>${t('language')}:</span> ${CONSOLE_LANGUAGES.filter((l) => l !== page.lang).map(
          (l) =>
            html`<a href="${page.languageLinksPath ?? '/console/sign-in'}?lang=${l}" lang="${l}" hreflang="${l}">${CONSOLE_LANGUAGE_NAMES[l]}</a> `,
        )}</footer>`;
  const notice = pauseNotice(page.lang, frame?.paused);
  return pageHeaders(reply.code(status), CONSOLE_CSP, 'same-origin').send(
    `<!doctype html><html lang="${page.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
      `<meta name="robots" content="noindex"><title>${escapeXml(page.title)} · ${escapeXml(t('console'))}</title><style>${CONSOLE_STYLE}</style></head>` +
      `<body data-now="${page.now}">${header.text}<main id="main">${notice.text}${page.body.text}</main>` +
      `${languages.text}<script>${CONSOLE_SCRIPT}</script></body></html>`,
  );
}
