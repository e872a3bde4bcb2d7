/**
 * The frame of every cashier page: one HTML document with its style and script inline, allowed by
 * their hashes in a strict Content-Security-Policy (nothing else may load or run, nothing from a
 * third party), mobile first, readable without JavaScript.
 */
import type { FastifyReply } from 'fastify';
import { escapeXml, html, pageHeaders, strictCsp, type Html } from '../http/html.js';
import { CASHIER_LANGUAGES, LANGUAGE_NAMES, type CashierLanguage, type Translate } from './i18n.js';

const STYLE = `
:root{color-scheme:light;--ink:#111827;--muted:#374151;--line:#d1d5db;--accent:#0b4f9c;--ok:#065f46;--bad:#991b1b;--warn:#78350f}
*{box-sizing:border-box}[hidden]{display:none!important}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:#f3f4f6}
main{max-width:30rem;margin:0 auto;padding:1rem;background:#fff;min-height:100vh}
@media (min-width:40rem){main{margin:2rem auto;min-height:0;border:1px solid var(--line);border-radius:.75rem;padding:1.5rem 2rem}}
h1{font-size:1.35rem;margin:.25rem 0 .5rem}h2{font-size:1.1rem;margin:1.25rem 0 .5rem}
p{margin:.5rem 0}.muted{color:var(--muted);font-size:.9rem}
.amount{font-size:2rem;font-weight:700;margin:.25rem 0}
.code{display:block;width:100%;field-sizing:content;font:14px/1.4 ui-monospace,Menlo,Consolas,monospace;
word-break:break-all;padding:.5rem;border:1px solid var(--line);border-radius:.5rem;background:#f9fafb;
color:var(--ink);resize:none}
.qr{display:block;margin:.75rem auto;max-width:100%;height:auto}
.barcode{display:block;width:100%;height:16mm;margin:.75rem 0}
.pix{display:flex;flex-direction:column}.pix>*{margin-top:0}
.qr-box summary{cursor:pointer;color:var(--accent);font-weight:600;min-height:44px;padding:.6rem 0}
.qr-box .qr{width:12rem}
@media (min-width:40rem){.pix .qr-box{order:-1}.pix .qr-box>summary{display:none}.pix .qr-box .qr{width:auto}}
.primary-copy{width:100%;font-size:1.1rem}
.receipt{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:.5rem 0 1rem}
.receipt dt{color:var(--muted)}.receipt dd{margin:0;overflow-wrap:anywhere;font-weight:600}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:.6rem 1rem;margin:.35rem .35rem .35rem 0;
border-radius:.5rem;border:2px solid var(--accent);background:var(--accent);color:#fff;text-decoration:none;
cursor:pointer;min-height:44px}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}
button:focus-visible,a:focus-visible,input:focus-visible,textarea:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
a{color:var(--accent)}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text]{font:inherit;width:100%;padding:.6rem;border:2px solid #6b7280;border-radius:.5rem;color:var(--ink)}
input[aria-invalid=true]{border-color:var(--bad)}
fieldset{border:0;padding:0;margin:1rem 0}legend{font-weight:600;margin-bottom:.25rem}
.method{display:flex;gap:.6rem;align-items:flex-start;border:2px solid var(--line);border-radius:.5rem;padding:.6rem;
margin:.4rem 0;font-weight:400;background:#fff}
.method input{flex:none;margin:.2rem 0 0;width:1.25rem;height:1.25rem;accent-color:var(--accent)}.method strong{display:block}
.method.checked,.method:has(input:checked){border-color:var(--accent);background:#eff6ff;box-shadow:inset 0 0 0 1px var(--accent)}
.error{color:var(--bad);font-weight:600}
.summary{border:2px solid var(--bad);border-radius:.5rem;padding:.5rem 1rem;margin:.5rem 0}
.status{font-weight:600;padding:.5rem .75rem;border-radius:.5rem;background:#eff6ff}
.status.ok{background:#ecfdf5;color:var(--ok)}
.warning{border-left:4px solid var(--warn);padding:.25rem .75rem;background:#fffbeb}
.sandbox{border:2px dashed var(--warn);border-radius:.5rem;padding:.75rem 1rem;margin-top:1.5rem;background:#fffbeb}
.sandbox h2{margin-top:0;color:var(--warn)}
.row{display:flex;gap:.5rem;align-items:flex-end;flex-wrap:wrap}.row label{margin-top:0}.row input{width:9rem}
nav{margin-top:1.5rem;font-size:.9rem}nav a{margin-right:.75rem}
ol,ul{padding-left:1.25rem}
@media print{nav,button,.button,[data-return],.sandbox,.no-print{display:none!important}body{background:#fff}
main{border:0;margin:0;max-width:none;min-height:0}}
`.replace(/\n/g, '');

/**
 * Progressive enhancement only: copy buttons, the countdown, the status poll that reloads the page
 * when the order moves on (the page without script shows the same and refreshes itself), the chosen
 * method's card, the fields only some methods need (the document; OXXO's name and email, shown only
 * while OXXO is chosen: without script they stay shown), forms sent once (`data-once`: their buttons
 * disabled while the post is in flight) and the paid page's stoppable countdown back to the shop
 * (without script: its button alone), the receipt's print button, and the Pix QR code folded away on a
 * phone (open without script).
 */
const SCRIPT = `(function(){
var d=document,b=d.body;
d.querySelectorAll('[data-copy]').forEach(function(btn){btn.hidden=false;btn.addEventListener('click',function(){
var el=d.getElementById(btn.getAttribute('data-copy'));if(!el)return;var text=el.value||el.textContent;
var done=function(){var old=btn.textContent;btn.textContent=btn.getAttribute('data-copied');setTimeout(function(){btn.textContent=old},2000)};
if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(text).then(done,function(){
el.select&&el.select()})}else{el.select&&el.select();try{d.execCommand('copy');done()}catch(e){}}});});
var c=d.querySelector('[data-expires]');
if(c){var end=Number(c.getAttribute('data-expires')),skew=Number(b.getAttribute('data-now'))-Date.now();
var tick=function(){var left=Math.max(0,end-(Date.now()+skew));var s=Math.floor(left/1000),h=Math.floor(s/3600),m=Math.floor(s%3600/60);s=s%60;
c.textContent=(h>0?h+':'+String(m).padStart(2,'0'):m)+':'+String(s).padStart(2,'0');if(left<=0){
location.replace(location.pathname+location.search)}else{setTimeout(tick,1000)}};tick();}
var u=b.getAttribute('data-status-url');
if(u){var poll=function(){fetch(u,{cache:'no-store'}).then(function(r){return r.json()}).then(function(s){
if(s.state!==b.getAttribute('data-state')){location.reload()}else{setTimeout(poll,3000)}},function(){
setTimeout(poll,6000)})};setTimeout(poll,3000);}
var sm=d.querySelector('.summary');if(sm)sm.focus();
var rs=d.querySelectorAll('input[name=method]'),ct=d.getElementById('contact-field');
var contact=function(){if(ct)ct.hidden=!d.querySelector('input[name=method][data-needs-contact="true"]:checked')};
if(ct){contact();window.addEventListener('pageshow',contact)}
rs.forEach(function(r){r.addEventListener('change',function(){var doc=d.getElementById('document-field');
if(doc)doc.hidden=r.getAttribute('data-needs-document')!=='true';contact();
rs.forEach(function(o){var l=o.closest('.method');if(l)l.classList.toggle('checked',o.checked)})})});
d.querySelectorAll('form[data-once]').forEach(function(f){f.addEventListener('submit',function(e){if(f.getAttribute('data-sent')){e.preventDefault();return}
f.setAttribute('data-sent','1');f.querySelectorAll('button').forEach(function(x){x.disabled=true})})});
window.addEventListener('pageshow',function(e){
if(e.persisted)d.querySelectorAll('form[data-once]').forEach(function(f){f.removeAttribute('data-sent');
f.querySelectorAll('button').forEach(function(x){x.disabled=false})})});
var rt=d.querySelector('[data-return]');
if(rt){var n=Number(rt.getAttribute('data-return-in')),rx=rt.querySelector('[data-return-text]'),stop=rt.querySelector('[data-return-stop]'),tm;
var step=function(){if(n<=0){location.assign(rt.getAttribute('data-return'));
return}rx.textContent=rt.getAttribute('data-template').replace('{seconds}',String(n));n-=1;tm=setTimeout(step,1000)};
rt.hidden=false;step();stop.addEventListener('click',function(){clearTimeout(tm);
rx.textContent=rt.getAttribute('data-stopped');stop.hidden=true;var a=d.getElementById('return-link');
if(a)a.focus()});}
d.querySelectorAll('[data-print]').forEach(function(p){p.hidden=false;p.addEventListener('click',function(){window.print()})});
var qb=d.querySelector('.qr-box');
if(qb&&window.matchMedia){var wide=window.matchMedia('(min-width:40rem)');qb.open=wide.matches;
wide.addEventListener('change',function(e){if(e.matches)qb.open=true})}
})();`;

/** Only this page's own inline style and script, same-origin fetches and forms; no frames, no plugins, no base. */
export const CASHIER_CSP = strictCsp(STYLE, SCRIPT);

export interface PageInput {
  lang: CashierLanguage;
  t: Translate;
  title: string;
  body: Html;
  /** data-* attributes of <body> the script reads: the status endpoint and the state shown. */
  data?: Readonly<Record<string, string>>;
  /** A waiting page without script reloads itself this often (seconds) to show the order's new state. */
  reloadWithoutScript?: number;
  /** The page's own path, for the language links. */
  path: string;
  /** The languages the page's links offer (the page's country's and English); every language when absent. */
  languages?: readonly CashierLanguage[];
}

/** Sends one cashier page with its security headers. */
export function sendPage(reply: FastifyReply, status: number, page: PageInput): FastifyReply {
  const data = Object.entries(page.data ?? {})
    .map(([name, value]) => ` data-${name}="${escapeXml(value)}"`)
    .join('');
  const refresh =
    page.reloadWithoutScript === undefined
      ? ''
      : `<noscript><meta http-equiv="refresh" content="${page.reloadWithoutScript}"></noscript>`;
  const offered = (page.languages ?? CASHIER_LANGUAGES).filter((l) => l !== page.lang);
  // No links when the page is already in the one language it offers (a nav with nothing in it says nothing).
  const languages =
    offered.length === 0
      ? html``
      : html`<nav aria-label="${page.t('language')}">${offered.map(
          (l) => html`<a href="${page.path}?lang=${l}" lang="${l}" hreflang="${l}">${LANGUAGE_NAMES[l]}</a>`,
        )}</nav>`;
  return pageHeaders(reply.code(status), CASHIER_CSP).send(
    `<!doctype html><html lang="${page.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
      `<meta name="robots" content="noindex">${refresh}<title>${escapeXml(page.title)}</title><style>${STYLE}</style></head>` +
      `<body${data}><main>${page.body.text}${languages.text}</main><script>${SCRIPT}</script></body></html>`,
  );
}
