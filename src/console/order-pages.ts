/**
 * The console's order pages: the search (an exact id, or a part of the externalOrderId or of the
 * payer's phone or document; statuses in words, the different-amount filter, dates; newest first,
 * keyset paging), the totals of every matching order of at most a month of days when the merchant
 * asks for them, their CSV export (streamed, formula-safe), and an order's detail (its fields, the
 * payer masked, the rail's reference, state history, ledger entries, what happened on chain,
 * voucher and callbacks).
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { voucherLink, hasVoucher } from '../brazil/voucher.js';
import { formatUnits, TOKEN_DECIMALS } from '../exchange/amounts.js';
import { brazilDetails, payerDocument } from '../brazil/details.js';
import { documentTypeOf } from '../brazil/documents.js';
import { maskDocument } from '../brazil/voucher.js';
import { cashierDetails } from '../cashier/checkout.js';
import { exchangeDetails } from '../exchange/records.js';
import { html, type Html } from '../http/html.js';
import type { Language } from '../http/language.js';
import { eventsOfOrder, findSettledByHand, type OrderRow } from '../orders/queries.js';
import { collectionMarkStatus, MARK_STATUS_AMOUNT_DIFFERS, payTypeText } from '../orders/records.js';
import { kenyaDetails } from '../kenya/kinds.js';
import { isKenyanMobile, maskKenyanMobile } from '../kenya/phone.js';
import { chainView, type ChainView } from '../rails/chain/chain-view.js';
import { railMessagesOfOrder } from '../rails/queries.js';
import { COLLECTION_STATUS, EXCHANGE_STATUS, isFinal, statusText, TRANSFER_STATUS } from '../orders/state-machine.js';
import type { OrderArea, OrderKind } from '../store/schema.js';
import { orderCallbacksPanel } from './callback-pages.js';
import { pixReceivedPanel, pixReturnsLink } from './pix-pages.js';
import {
  badge,
  DAY_MS,
  dayOf,
  dayRange,
  dayRangeLabels,
  dayStart,
  errorSummary,
  linkWith,
  notice,
  textField,
  type FieldError,
} from './forms.js';
import { csvCell, csvText } from './csv.js';
import { translator, type Translator } from '../i18n/messages.js';
import { dateTime, decimalText, money } from './i18n.js';
import type { ConsoleServices } from './plugin.js';
import {
  IN_PROGRESS,
  KIND_STATUSES,
  merchantOrder,
  orderEntries,
  orderTotals,
  searchOrders,
  SUCCEEDED,
  SUCCESS_STATUS,
  TOTALS_MAX_DAYS,
  UNSUCCESSFUL,
  type OrderCursor,
  type OrderSearch,
  type OrderTotals,
  type StatusMatch,
} from './queries.js';
import { queryParam, type ConsoleContext, type ConsoleRouter } from './router.js';

export const PAGE_SIZE = 50;

const AREAS: readonly OrderArea[] = ['ken', 'bra', 'exchange', 'cashier'];
const KINDS: readonly OrderKind[] = ['collection', 'transfer', 'fiat_to_token', 'token_to_fiat'];

type T = Translator<'console.orders'>;

type ChainT = Translator<'console.chain'>;
type ChainSend = NonNullable<ChainView['send']>;

/** Base units as USDT ("10.5 USDT"), with the order's token decimals (else its chain's); raw units when neither is known. */
function usdt(order: OrderRow, chain: string, units: string): string {
  let decimals = (TOKEN_DECIMALS as Partial<Record<string, number>>)[chain];
  if (order.area === 'exchange') {
    try {
      decimals = exchangeDetails(order).tokenDecimals;
    } catch {
      // Not an exchange order's details: the chain's decimals.
    }
  }
  return decimals === undefined || !/^\d+$/.test(units) ? units : `${formatUnits(BigInt(units), decimals)} USDT`;
}

function sendState(t: ChainT, state: ChainSend['state']): Html {
  const tone = state === 'confirmed' ? 'ok' : state === 'failed' || state === 'cancelled' ? 'bad' : 'wait';
  return badge(t(state), tone);
}

/** A signed transaction's outcome in words: null while open; 'reverted: …' and 'refused: …' keep their reason. */
function attemptOutcome(t: ChainT, outcome: string | null): Html {
  if (outcome === null) return badge(t('open'), 'wait');
  if (outcome === 'mined') return badge(t('mined'), 'ok');
  if (outcome === 'replaced') return badge(t('replaced'));
  const reasoned = /^(reverted|refused): ?([\s\S]*)$/.exec(outcome);
  if (reasoned !== null) return badge(t(reasoned[1] as 'reverted' | 'refused', { reason: reasoned[2] ?? '' }), 'bad');
  return badge(outcome);
}

/** The order page's "On chain" panel: its token send and the deposits to its address; empty when it has neither. */
function chainPanel(lang: Language, order: OrderRow, view: ChainView | undefined): Html {
  if (view === undefined || (view.send === null && view.deposits.length === 0)) return html``;
  const t = translator('console.chain', lang);
  const send = view.send;
  const sendPart =
    send === null
      ? ''
      : html`<h3>${t('send')}</h3><dl>
${detailRow(t('state'), sendState(t, send.state))}
${detailRow(t('network'), send.chain)}
${detailRow(t('from'), send.from === null ? null : html`<code>${send.from}</code>`)}
${detailRow(t('to'), html`<code>${send.to}</code>`)}
${detailRow(t('amount'), usdt(order, send.chain, send.units))}
${detailRow(t('txHash'), send.txHash === null ? null : html`<code>${send.txHash}</code>`)}
${detailRow(t('block'), send.blockNumber === null ? null : String(send.blockNumber))}
${detailRow(t('confirmations'), send.confirmations === null ? null : String(send.confirmations))}
${send.failure !== null ? detailRow(t('failure'), send.failure) : ''}
</dl>${
          send.attempts.length === 0
            ? ''
            : html`<h3>${t('attempts')}</h3><p class="muted">${t('attemptsHint')}</p><div class="table"
tabindex="0"><table><thead><tr><th>${t('txHash')}</th><th>${t('signedAt')}</th><th>${t('outcome')}</th></tr></thead><tbody>${send.attempts.map(
                (a) =>
                  html`<tr><td class="mono">${a.txHash}</td><td>${dateTime(lang, a.createdAt)}</td><td>${attemptOutcome(t, a.outcome)}</td></tr>`,
              )}</tbody></table></div>`
        }`;
  const depositPart =
    view.deposits.length === 0
      ? ''
      : html`<h3>${t('deposits')}</h3><p class="muted">${t('depositsHint')}</p><div class="table"
tabindex="0"><table><thead><tr><th>${t('seenAt')}</th><th>${t('txHash')}</th><th>${t('sender')}</th><th class="num">${t('amount')}</th><th
class="num">${t('block')}</th><th>${t('depositState')}</th></tr></thead><tbody>${view.deposits.map((d) => {
          const state = d.state === 'reported' ? badge(t('reported'), 'ok') : badge(t('seen'), 'wait');
          const onChain = html`<td class="num">${usdt(order, d.chain, d.units)}</td><td class="num">${d.blockNumber}</td>`;
          return html`<tr><td>${dateTime(lang, d.seenAt)}</td><td class="mono">${d.txHash}</td><td class="mono">${d.from}</td>${onChain}<td>${state}</td></tr>`;
        })}</tbody></table></div>`;
  return html`<div class="panel"><h2>${t('title')}</h2><p class="muted">${t('hint')}</p>${sendPart}${depositPart}</div>`;
}

function areaName(t: T, area: string): string {
  return area === 'ken'
    ? t('ken')
    : area === 'bra'
      ? t('bra')
      : area === 'exchange'
        ? t('exchange')
        : area === 'cashier'
          ? t('cashierArea')
          : area;
}

function kindName(t: T, kind: string): string {
  return (KINDS as readonly string[]).includes(kind) ? t(kind as OrderKind) : kind;
}

export function accountName(
  t: (key: 'available' | 'frozen' | 'awaiting_settlement') => string,
  account: string,
): string {
  return account === 'available' || account === 'frozen' || account === 'awaiting_settlement' ? t(account) : account;
}

/** The status as a badge: its name and number; green when it worked, red when it ended otherwise, amber while it waits. */
export function statusBadge(kind: OrderKind, status: number): Html {
  return badge(`${statusText(kind, status)} (${status})`, statusTone(kind, status));
}

function statusTone(kind: OrderKind, status: number): 'ok' | 'bad' | 'wait' {
  return !isFinal(kind, status) ? 'wait' : status === SUCCESS_STATUS[kind] ? 'ok' : 'bad';
}

/**
 * The status in the staff's words, as the list's filters name it ("Paid", "Rejected by bank"), with
 * the API's name and number beside it for the merchant's developers.
 */
function statusInWords(t: T, kind: OrderKind, status: number): Html {
  const label = STATUS_LABELS.get(`${kind}:${status}`);
  const words = label === undefined ? statusText(kind, status) : t(label);
  return html`${badge(words, statusTone(kind, status))} <span class="muted mono">${statusText(kind, status)} (${status})</span>`;
}

/** The quoted token amount of an exchange order or an aggregate cashier's USDT order, as exact decimal text ("18.5 USDT"). */
function tokenAmount(order: OrderRow): string | undefined {
  try {
    if (order.area === 'cashier') {
      const d = cashierDetails(order);
      return d.tokenUnits === undefined
        ? undefined
        : `${formatUnits(BigInt(d.tokenUnits), d.tokenDecimals ?? 6)} ${d.tokenType ?? 'USDT'}`;
    }
    if (order.kind !== 'fiat_to_token' && order.kind !== 'token_to_fiat') return undefined;
    const d = exchangeDetails(order);
    return `${formatUnits(BigInt(d.tokenUnits), d.tokenDecimals)} ${d.tokenType}`;
  } catch {
    return undefined;
  }
}

/** The rate an exchange order or a cashier's USDT order was priced at. */
function exchangeRateOf(order: OrderRow): string | undefined {
  try {
    if (order.area === 'cashier') return cashierDetails(order).exchangeRate;
    return order.area === 'exchange' ? exchangeDetails(order).exchangeRate : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The order's parties and rail as its detail shows them: the payer's (a payout's payee's) phone or
 * document masked as payer pages and vouchers mask them, never a document Cashgate generated; the
 * rail's reference (Pix end-to-end id, transaction hash); an exchange's addresses and tokens received.
 */
function partyAndRailRows(t: T, order: OrderRow): Html[] {
  const rows: Html[] = [];
  const code = (value: string) => html`<code>${value}</code>`;
  const phone = (label: 'payerPhone' | 'payeePhone' | 'promptPhone', value: string | undefined) => {
    if (value !== undefined && isKenyanMobile(value)) rows.push(detailRow(t(label), maskKenyanMobile(value)));
  };
  const units = (value: string | undefined, decimals: number, token: string) =>
    value !== undefined && /^\d+$/.test(value) ? `${formatUnits(BigInt(value), decimals)} ${token}` : undefined;
  try {
    if (order.area === 'ken') {
      const d = kenyaDetails(order);
      phone(order.kind === 'transfer' ? 'payeePhone' : 'payerPhone', d.phone);
      if (d.checkingPhone !== d.phone) phone('promptPhone', d.checkingPhone);
    }
    if (order.area === 'bra' || order.area === 'cashier') {
      const d = brazilDetails(order);
      if (order.kind === 'transfer') {
        if (d.personId !== undefined && d.personId !== '')
          rows.push(
            detailRow(t('payeeDocument'), `${d.personIdType ?? ''} ${maskDocument(d.personIdType, d.personId)}`.trim()),
          );
      } else {
        const payer = payerDocument(d);
        if (payer !== undefined)
          rows.push(detailRow(t('payerDocument'), `${payer.type} ${maskDocument(payer.type, payer.number)}`));
      }
      const reportedType = d.payerDocument === undefined ? undefined : documentTypeOf(d.payerDocument);
      const reported = [
        d.payerName ?? '',
        reportedType === undefined || d.payerDocument === undefined
          ? ''
          : `${reportedType} ${maskDocument(reportedType, d.payerDocument)}`,
      ].filter((part) => part !== '');
      if (reported.length > 0) rows.push(detailRow(t('pspPayer'), reported.join(' · ')));
      if (order.channel_type.startsWith('PIX') && d.endToEndId !== undefined)
        rows.push(detailRow(t('pixE2e'), code(d.endToEndId)));
    }
    if (order.area === 'cashier') {
      const d = cashierDetails(order);
      if (d.method === 'USDT_TRC20') {
        if (d.addressTo !== undefined) rows.push(detailRow(t('depositAddress'), code(d.addressTo)));
        const received = units(d.paidUnits, d.tokenDecimals ?? 6, d.tokenType ?? 'USDT');
        if (received !== undefined) rows.push(detailRow(t('tokensReceived'), received));
        if (d.tradeHash !== undefined) rows.push(detailRow(t('txHash'), code(d.tradeHash)));
      }
    }
    if (order.area === 'exchange') {
      const d = exchangeDetails(order);
      rows.push(
        detailRow(t(order.kind === 'fiat_to_token' ? 'receivingAddress' : 'depositAddress'), code(d.addressTo)),
      );
      if (d.addressFrom !== undefined) rows.push(detailRow(t('senderAddress'), code(d.addressFrom)));
      const received = units(d.receivedUnits, d.tokenDecimals, d.tokenType);
      if (received !== undefined) rows.push(detailRow(t('tokensReceived'), received));
      if (d.tradeHash !== undefined) rows.push(detailRow(t('txHash'), code(d.tradeHash)));
    }
  } catch {
    // Details of another shape than the area's: the detail shows the order's columns only.
  }
  return rows;
}

const amountOf = (lang: Language, order: OrderRow, minor: number | null): string =>
  minor === null ? '—' : money(lang, BigInt(minor), order.currency);

/** The status filter's choices, in plain words, grouped by kind; each stands for (kinds, statuses) pairs. */
interface StatusChoice {
  value: string;
  label: StatusLabel;
  matches: readonly StatusMatch[];
}

type StatusLabel =
  | 'stSucceeded'
  | 'stUnsuccessful'
  | 'stOpen'
  | 'stPaid'
  | 'stWaiting'
  | 'stExpired'
  | 'stCancelled'
  | 'stAccepted'
  | 'stAtBank'
  | 'stPaidOut'
  | 'stRejected'
  | 'stFailed'
  | 'stWaitFiat'
  | 'stFiatReceived'
  | 'stWaitToken'
  | 'stCompleted';

const EXCHANGE_KINDS: readonly OrderKind[] = ['fiat_to_token', 'token_to_fiat'];

const one = (group: string, kinds: readonly OrderKind[], status: number, label: StatusLabel): StatusChoice => ({
  value: `${group}:${status}`,
  label,
  matches: [{ kinds, statuses: [status] }],
});

export const STATUS_GROUPS: readonly {
  label: 'groupAny' | 'groupCollections' | 'groupPayouts' | 'exchange';
  choices: readonly StatusChoice[];
}[] = [
  {
    label: 'groupAny',
    choices: [
      { value: 'success', label: 'stSucceeded', matches: SUCCEEDED },
      { value: 'unsuccessful', label: 'stUnsuccessful', matches: UNSUCCESSFUL },
      { value: 'open', label: 'stOpen', matches: IN_PROGRESS },
    ],
  },
  {
    label: 'groupCollections',
    choices: [
      one('collection', ['collection'], COLLECTION_STATUS.paid, 'stPaid'),
      one('collection', ['collection'], COLLECTION_STATUS.pending, 'stWaiting'),
      one('collection', ['collection'], COLLECTION_STATUS.expired, 'stExpired'),
      one('collection', ['collection'], COLLECTION_STATUS.cancelled, 'stCancelled'),
    ],
  },
  {
    label: 'groupPayouts',
    choices: [
      one('transfer', ['transfer'], TRANSFER_STATUS.succeeded, 'stPaidOut'),
      one('transfer', ['transfer'], TRANSFER_STATUS.accepted, 'stAccepted'),
      one('transfer', ['transfer'], TRANSFER_STATUS.processing, 'stAtBank'),
      one('transfer', ['transfer'], TRANSFER_STATUS.bankRejected, 'stRejected'),
      one('transfer', ['transfer'], TRANSFER_STATUS.failed, 'stFailed'),
    ],
  },
  {
    label: 'exchange',
    choices: [
      one('exchange', EXCHANGE_KINDS, EXCHANGE_STATUS.complete, 'stCompleted'),
      one('exchange', EXCHANGE_KINDS, EXCHANGE_STATUS.waitPayCurrency, 'stWaitFiat'),
      one('exchange', EXCHANGE_KINDS, EXCHANGE_STATUS.receivingCurrency, 'stFiatReceived'),
      one('exchange', EXCHANGE_KINDS, EXCHANGE_STATUS.waitReceiveToken, 'stWaitToken'),
      one('exchange', EXCHANGE_KINDS, EXCHANGE_STATUS.failed, 'stFailed'),
    ],
  },
];

const STATUS_CHOICES = new Map(STATUS_GROUPS.flatMap((g) => g.choices.map((c) => [c.value, c] as const)));

/** Each kind's status ("collection:2") in the words of its own choice (not of a group of any kind), for the list's rows. */
const STATUS_LABELS = new Map(
  STATUS_GROUPS.slice(1)
    .flatMap((g) => g.choices)
    .flatMap((c) =>
      c.matches.flatMap((m) => m.kinds.flatMap((k) => m.statuses.map((st) => [`${k}:${st}`, c.label] as const))),
    )
    .reverse(),
);

/** Whether the order is a collection paid with another amount than asked (markStatus 1). */
const paidDifferently = (order: OrderRow): boolean =>
  order.kind === 'collection' && collectionMarkStatus(order) === MARK_STATUS_AMOUNT_DIFFERS;

interface Filters {
  q: string;
  area: string;
  kind: string;
  status: string;
  differs: string;
  from: string;
  to: string;
}

function filtersOf(request: FastifyRequest): Filters {
  return {
    q: queryParam(request, 'q').trim(),
    area: queryParam(request, 'area'),
    kind: queryParam(request, 'kind'),
    status: queryParam(request, 'status'),
    differs: queryParam(request, 'differs') === '1' ? '1' : '',
    from: queryParam(request, 'from'),
    to: queryParam(request, 'to'),
  };
}

interface Parsed {
  search: OrderSearch;
  errors: FieldError[];
}

function parseFilters(ctx: ConsoleContext, t: T, f: Filters, beforeAt: string, beforeId: string): Parsed {
  const errors: FieldError[] = [];
  const area =
    f.area === ''
      ? undefined
      : (AREAS as readonly string[]).includes(f.area)
        ? (f.area as OrderArea)
        : (errors.push({ field: 'area', message: t('badArea') }), undefined);
  const kind =
    f.kind === ''
      ? undefined
      : (KINDS as readonly string[]).includes(f.kind)
        ? (f.kind as OrderKind)
        : (errors.push({ field: 'kind', message: t('badKind') }), undefined);
  let statuses: readonly StatusMatch[] | undefined;
  if (f.status !== '') {
    const choice = STATUS_CHOICES.get(f.status);
    // A bare number (a link from before the statuses had words): that status of the chosen kind, or of any kind.
    const legacy = /^\d{1,3}$/.test(f.status)
      ? (kind === undefined ? KINDS : [kind])
          .filter((k) => KIND_STATUSES[k].includes(Number(f.status)))
          .map((k) => ({ kinds: [k], statuses: [Number(f.status)] }))
      : [];
    if (choice !== undefined && kind !== undefined && !choice.matches.some((m) => m.kinds.includes(kind)))
      errors.push({ field: 'status', message: t('statusOfOtherKind') });
    else if (choice !== undefined) statuses = choice.matches;
    else if (legacy.length > 0) statuses = legacy;
    else errors.push({ field: 'status', message: t('badStatus') });
  }
  const days = dayRange(ctx.lang, { from: f.from, to: f.to, required: false });
  errors.push(...days.errors);
  if (f.q.length > 128) errors.push({ field: 'q', message: t('badQuery') });
  let before: OrderCursor | undefined;
  if (beforeAt !== '' || beforeId !== '') {
    if (/^\d{1,16}$/.test(beforeAt) && /^[A-Za-z0-9_-]{1,64}$/.test(beforeId))
      before = { createdAt: Number(beforeAt), id: beforeId };
    else errors.push({ field: 'q', message: t('badPage') });
  }
  return {
    errors,
    search: {
      merchantId: ctx.merchantId,
      q: f.q === '' ? undefined : f.q,
      area,
      kind,
      statuses,
      differentAmount: f.differs === '1',
      from: days.range?.from,
      until: days.range?.until,
      before,
      limit: PAGE_SIZE + 1,
    },
  };
}

function select(name: string, label: string, options: Html[], error: FieldError | undefined): Html {
  return html`<div><label for="${name}">${label}</label>${
    error !== undefined ? html`<p class="error" id="${name}-error">${error.message}</p>` : ''
  }<select id="${name}" name="${name}"${
    error !== undefined ? html` aria-invalid="true" aria-describedby="${name}-error"` : ''
  }>${options}</select></div>`;
}

const option = (value: string, label: string, selected: boolean): Html =>
  html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;

function filterForm(t: T, lang: Language, f: Filters, errors: readonly FieldError[]): Html {
  const errorOf = (field: string) => errors.find((e) => e.field === field);
  const statusGroups = STATUS_GROUPS.map(
    (g) =>
      html`<optgroup label="${t(g.label)}">${g.choices.map((c) => option(c.value, t(c.label), f.status === c.value))}</optgroup>`,
  );
  // A bare status number (an older link) stays chosen as it was given.
  const legacy =
    f.status !== '' && !STATUS_CHOICES.has(f.status) && /^\d{1,3}$/.test(f.status)
      ? [option(f.status, f.status, true)]
      : [];
  return html`<form method="get" action="/console/orders" class="panel" novalidate>
${textField({ name: 'q', label: t('search'), type: 'search', value: f.q, hint: t('searchHint'), errors })}
<div class="filters">
${select('area', t('area'), [option('', t('any'), f.area === ''), ...AREAS.map((a) => option(a, areaName(t, a), f.area === a))], errorOf('area'))}
${select('kind', t('kind'), [option('', t('any'), f.kind === ''), ...KINDS.map((k) => option(k, kindName(t, k), f.kind === k))], errorOf('kind'))}
${select('status', t('status'), [option('', t('any'), f.status === ''), ...legacy, ...statusGroups], errorOf('status'))}
<div>${textField({ name: 'from', label: dayRangeLabels(lang).from, type: 'date', value: f.from, errors })}</div>
<div>${textField({ name: 'to', label: dayRangeLabels(lang).to, type: 'date', value: f.to, errors })}</div>
</div>
<label class="check"><input type="checkbox" name="differs" value="1"${f.differs === '1' ? html` checked` : ''}> ${t('differsFilter')}</label>
<button type="submit">${t('apply')}</button> <a class="button secondary" href="/console/orders">${t('reset')}</a></form>`;
}

/** A moment in the list's short, one-line form: "2026-11-25 14:05:09" (the column says UTC). */
function shortUtc(ms: number): Html {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')}</time>`;
}

function orderRow(lang: Language, t: T, order: OrderRow): Html {
  const token = tokenAmount(order);
  return html`<tr><td class="date">${shortUtc(order.created_at)}</td>
<td><a class="mono" href="/console/orders/${encodeURIComponent(order.id)}">${order.id}</a></td>
<td class="mono">${order.external_order_id}</td><td>${areaName(t, order.area)} / ${kindName(t, order.kind)}</td>
<td>${payTypeText(order.pay_type)} (${order.pay_type})</td>
<td class="num">${amountOf(lang, order, order.amount)}${token !== undefined ? html`<br><span class="muted">${token}</span>` : ''}</td>
<td class="num">${amountOf(lang, order, order.fee)}</td><td class="num">${amountOf(lang, order, order.actual_amount)}</td>
<td>${statusInWords(t, order.kind, order.status)}${paidDifferently(order) ? html` ${badge(t('differentAmount'), 'wait')}` : ''}</td>
<td>${order.remark ?? ''}</td></tr>`;
}

/**
 * The totals, only when the merchant asks: summing a long history on every view of the list would
 * make each view as slow as the history is long (docs/console.md, "Totals").
 */
type TotalsView =
  /** Asked for: the sums over the filters' days. */
  | { kind: 'summed'; totals: readonly OrderTotals[]; from: string; to: string }
  /** Not asked for: the link that asks, for the filters' days (the last TOTALS_MAX_DAYS when none are chosen). */
  | { kind: 'offered'; link: string; from: string; to: string }
  /** The filters' days are more than totals take, or none were given with the request. */
  | { kind: 'needsDays' }
  | { kind: 'none' };

/** The days the totals link asks for: the filters' own; else 31 days from the chosen first, or up to the chosen last or today. */
function totalsDays(f: Filters, now: number): { from: string; to: string } | undefined {
  const span = (TOTALS_MAX_DAYS - 1) * DAY_MS;
  const to = f.to !== '' ? f.to : f.from !== '' ? dayOf((dayStart(f.from) ?? now) + span) : dayOf(now);
  const from = f.from !== '' ? f.from : dayOf((dayStart(to) ?? now) - span);
  const start = dayStart(from);
  const end = dayStart(to);
  return start === undefined || end === undefined || end < start || end - start > span ? undefined : { from, to };
}

function totalsPanel(lang: Language, t: T, view: TotalsView): Html {
  switch (view.kind) {
    case 'none':
      return html``;
    case 'needsDays':
      return html`<p class="muted" id="totals-days">${t('totalsNeedDays', { days: TOTALS_MAX_DAYS })}</p>`;
    case 'offered':
      return html`<p id="totals-offer"><a class="button secondary" href="${view.link}">${t('showTotals')}</a> <span
class="muted">${t('showTotalsHint', { from: view.from, to: view.to })}</span></p>`;
    case 'summed':
      return html`<div class="table" tabindex="0"><table id="order-totals"><caption
class="muted">${t('totalsCaption', { from: view.from, to: view.to })}</caption>
<thead><tr><th>${t('currency')}</th><th class="num">${t('count')}</th><th class="num">${t('amount')}</th><th class="num">${t('actualAmount')}</th></tr></thead>
<tbody>${
        view.totals.length === 0
          ? html`<tr><td colspan="4">${t('totalsNone')}</td></tr>`
          : view.totals.map(
              (row) =>
                html`<tr data-currency="${row.currency}"><td>${row.currency}</td><td class="num" data-count="${row.count}">${row.count}</td><td class="num"
data-amount="${decimalText(row.amount, row.currency)}">${money(lang, row.amount, row.currency)}</td><td class="num"
data-actual="${decimalText(row.actual, row.currency)}">${money(lang, row.actual, row.currency)}</td></tr>`,
            )
      }</tbody></table></div>`;
  }
}

function listPage(
  ctx: ConsoleContext,
  reply: FastifyReply,
  input: {
    filters: Filters;
    errors: FieldError[];
    orders: OrderRow[];
    totals: TotalsView;
    olderLink?: string | undefined;
    paged: boolean;
    pixReturns: Html;
  },
): FastifyReply {
  const t = translator('console.orders', ctx.lang);
  const f = input.filters;
  const filtered = Object.values(f).some((v) => v !== '');
  const table =
    input.orders.length === 0
      ? html`<p>${filtered || input.paged ? t('empty') : t('emptyAll')}</p>`
      : html`<div class="table" tabindex="0"><table id="orders"><caption class="muted">${t('ordersCaption')}</caption><thead><tr><th>${t('createdUtc')}</th>
<th>${t('orderId')}</th><th>${t('externalOrderId')}</th><th>${t('areaKind')}</th><th>${t('payType')}</th>
<th class="num">${t('amount')}</th><th class="num">${t('fee')}</th><th class="num">${t('actualAmount')}</th>
<th>${t('status')}</th><th>${t('remark')}</th></tr></thead>
<tbody>${input.orders.map((o) => orderRow(ctx.lang, t, o))}</tbody></table></div>`;
  const newest = input.paged ? html`<a href="${filterLink(f)}">${t('newest')}</a>` : '';
  const older = input.olderLink !== undefined ? html`<a href="${input.olderLink}">${t('older')}</a>` : '';
  const pager =
    input.olderLink !== undefined || input.paged
      ? html`<nav class="pager" aria-label="${t('paging')}">${newest}${older}</nav>`
      : '';
  const exportLink =
    input.errors.length === 0 && input.orders.length > 0
      ? html`<p><a class="button secondary" id="orders-csv"
href="${filterLink(f, {}, '/console/orders.csv')}" download>${t('download')}</a> <span class="muted">${t('downloadHint')}</span></p>`
      : '';
  const summary = errorSummary(ctx.lang, input.errors);
  const form = filterForm(t, ctx.lang, f, input.errors);
  const totals = totalsPanel(ctx.lang, t, input.totals);
  return ctx.page(reply, {
    status: input.errors.length > 0 ? 400 : 200,
    title: t('title'),
    section: 'orders',
    body: html`<h1>${t('title')}</h1>${summary}${form}<div class="panel">${totals}${exportLink}${table}${pager}</div>${input.pixReturns}`,
  });
}

function filterLink(f: Filters, extra: Record<string, string> = {}, path = '/console/orders'): string {
  return linkWith(path, { ...f, ...extra });
}

/** Rows the CSV export reads at a time: the file is streamed, never held whole. */
const CSV_BATCH = 1_000;

export const ORDERS_CSV_HEADER =
  'created_utc,order_id,external_order_id,area,kind,status_code,status,pay_type,currency,amount,fee,actual_amount,' +
  'paid_different_amount,pay_time_utc,complete_time_utc,remark';

const isoOrEmpty = (ms: number | null): string => (ms === null ? '' : new Date(ms).toISOString());

function orderCsvLine(order: OrderRow): string {
  const amount = (minor: number | null) => (minor === null ? '' : csvCell(decimalText(minor, order.currency)));
  return [
    csvText(isoOrEmpty(order.created_at)),
    csvText(order.id),
    csvText(order.external_order_id),
    csvText(order.area),
    csvText(order.kind),
    csvCell(String(order.status)),
    csvText(statusText(order.kind, order.status)),
    csvCell(String(order.pay_type)),
    csvText(order.currency),
    // Amounts are numbers: never prefixed, exact decimal text.
    amount(order.amount),
    amount(order.fee),
    amount(order.actual_amount),
    paidDifferently(order) ? '1' : '0',
    csvText(isoOrEmpty(order.pay_time)),
    csvText(isoOrEmpty(order.complete_time)),
    csvText(order.remark ?? ''),
  ].join(',');
}

/** The CSV's lines, newest order first, read from the database a batch at a time. */
async function* orderCsvLines(deps: ConsoleServices, search: OrderSearch): AsyncGenerator<string> {
  yield `${ORDERS_CSV_HEADER}\r\n`;
  let before = search.before;
  for (;;) {
    const batch = await searchOrders(deps.store.read, { ...search, before, limit: CSV_BATCH });
    if (batch.length > 0) yield `${batch.map(orderCsvLine).join('\r\n')}\r\n`;
    const last = batch.at(-1);
    if (batch.length < CSV_BATCH || last === undefined) return;
    before = { createdAt: last.created_at, id: last.id };
  }
}

function detailRow(label: string, value: Html | string | null | undefined): Html {
  return html`<dt>${label}</dt><dd>${value === null || value === undefined || value === '' ? '—' : value}</dd>`;
}

async function detailPage(
  ctx: ConsoleContext,
  deps: ConsoleServices,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const t = translator('console.orders', ctx.lang);
  const orderId = (request.params as { orderId?: string }).orderId ?? '';
  const order = orderId.length > 64 ? undefined : await merchantOrder(deps.store.read, ctx.merchantId, orderId);
  if (order === undefined) return ctx.notFound(reply);
  const lang = ctx.lang;
  const [events, entries, railMessages, pixReceived, chain, byHand] = await Promise.all([
    eventsOfOrder(deps.store.read, order.id),
    orderEntries(deps.store.read, ctx.merchantId, order.id),
    railMessagesOfOrder(deps.store.read, order.id),
    pixReceivedPanel(ctx, deps, order.id),
    // Only exchange and cashier (USDT) orders have sends or deposit addresses.
    order.area === 'exchange' || order.area === 'cashier'
      ? chainView(deps.store.read, order.id, order.rail_ref)
      : undefined,
    // A payout in doubt the payment company settled by hand (who and why stay with the operators).
    order.kind === 'transfer' ? findSettledByHand(deps.store.read, order.id) : undefined,
  ]);
  const mpesa = order.area === 'ken' ? kenyaDetails(order) : undefined;
  const railHeadings = [t('time'), t('railDirection'), t('railEndpoint'), t('railCode'), t('railBody')];
  const rail =
    railMessages.length === 0
      ? ''
      : html`<div class="panel"><h2>${t('rail')}</h2><p class="muted">${t('railHint')}</p><div class="table"
tabindex="0"><table><thead><tr>${railHeadings.map((label) => html`<th>${label}</th>`)}</tr></thead><tbody>${railMessages.map(
          (m) => {
            const disposition = m.disposition === null ? '' : ` (${m.disposition})`;
            const exchanged = [m.request, m.response].filter((part) => part !== null).join('\n');
            return html`<tr><td>${dateTime(lang, m.at)}</td><td>${m.direction === 'out' ? '→' : '←'}</td><td
class="mono">${m.endpoint}${disposition}</td><td class="mono">${m.code ?? ''}</td><td><details><summary
class="mono">${m.ref ?? ''}</summary><pre class="mono">${exchanged}</pre></details></td></tr>`;
          },
        )}</tbody></table></div></div>`;
  const voucher = hasVoucher(order) ? await voucherLink(deps, order) : undefined;
  const final = isFinal(order.kind, order.status);
  const callbacks = await orderCallbacksPanel(ctx, deps, { orderId: order.id, final });
  const token = tokenAmount(order);
  const rate = token === undefined ? undefined : exchangeRateOf(order);
  const statusOf = (status: number | null): Html | string => (status === null ? '—' : statusBadge(order.kind, status));
  const retriggered = notice(queryParam(request, 'done') === 'retriggered' ? t('retriggered') : undefined);
  const settledByHand =
    byHand === undefined ? '' : notice(t('settledByHand', { date: dateTime(lang, byHand.settled_at) }));
  const errorMessage =
    order.error_msg !== null || order.error_msg_en !== null
      ? detailRow(
          t('errorMessage'),
          [
            order.error_msg ?? '',
            order.error_msg_en !== null && order.error_msg_en !== order.error_msg ? ` / ${order.error_msg_en}` : '',
          ].join(''),
        )
      : '';
  const cashierUrl = order.cashier_id === null ? undefined : `${deps.publicBaseUrl}/cashier/${order.cashier_id}`;
  const history =
    events.length === 0
      ? html`<p>${t('noHistory')}</p>`
      : html`<div class="table"
tabindex="0"><table><thead><tr><th>${t('time')}</th><th>${t('event')}</th><th>${t('change')}</th><th>${t('source')}</th></tr></thead><tbody>${events.map(
          (e) => {
            const change = html`${statusOf(e.from_status)} → ${statusOf(e.to_status)}`;
            return html`<tr><td>${dateTime(lang, e.at)}</td><td class="mono">${e.event}</td><td>${change}</td><td>${e.source}</td></tr>`;
          },
        )}</tbody></table></div>`;
  const ledger =
    entries.length === 0
      ? html`<p>${t('noEntries')}</p>`
      : html`<div class="table"
tabindex="0"><table><thead><tr><th>${t('time')}</th><th>${t('journalKind')}</th><th>${t('account')}</th><th
class="num">${t('amount')}</th><th>${t('memo')}</th></tr></thead><tbody>${entries.map(
          (e) =>
            html`<tr><td>${dateTime(lang, e.createdAt)}</td><td class="mono">${e.journalKind}</td><td>${accountName(t, e.account)}</td><td
class="num">${signed(lang, e.amount, e.currency)}</td><td>${e.memo ?? ''}</td></tr>`,
        )}</tbody></table></div>`;
  return ctx.page(reply, {
    title: t('detailTitle', { orderId: order.id }),
    section: 'orders',
    body: html`<p><a href="/console/orders">${t('backToOrders')}</a></p><h1>${t('detailTitle', { orderId: order.id })}</h1>${retriggered}${settledByHand}
<div class="panel"><dl>
${detailRow(t('orderId'), html`<code>${order.id}</code>`)}
${detailRow(t('externalOrderId'), html`<code>${order.external_order_id}</code>`)}
${detailRow(t('channelOrderId'), order.channel_order_id)}
${mpesa?.mpesaReceipt !== undefined ? detailRow(t('mpesaReceipt'), html`<code>${mpesa.mpesaReceipt}</code>`) : ''}
${mpesa?.mpesaPhone !== undefined && isKenyanMobile(mpesa.mpesaPhone) ? detailRow(t('mpesaPhone'), maskKenyanMobile(mpesa.mpesaPhone)) : ''}
${mpesa?.receiverName !== undefined ? detailRow(t('receiverName'), mpesa.receiverName) : ''}
${partyAndRailRows(t, order)}
${detailRow(t('areaKind'), `${areaName(t, order.area)} / ${kindName(t, order.kind)}`)}
${detailRow(t('channel'), order.channel_type)}
${detailRow(t('payType'), `${payTypeText(order.pay_type)} (${order.pay_type})`)}
${detailRow(t('status'), statusInWords(t, order.kind, order.status))}
${detailRow(t('amount'), amountOf(lang, order, order.amount))}
${token !== undefined ? detailRow(t('tokenAmount'), token) : ''}
${rate !== undefined ? detailRow(t('exchangeRate'), rate) : ''}
${detailRow(t('fee'), amountOf(lang, order, order.fee))}
${detailRow(t('actualAmount'), amountOf(lang, order, order.actual_amount))}
${detailRow(t('currency'), order.currency)}
${detailRow(t('created'), dateTime(lang, order.created_at))}
${detailRow(t('paid'), dateTime(lang, order.pay_time))}
${detailRow(t('completed'), dateTime(lang, order.complete_time))}
${order.cashier_expire_at !== null ? detailRow(t('cashierExpire'), dateTime(lang, order.cashier_expire_at)) : ''}
${detailRow(t('notifyUrl'), order.notify_url)}
${detailRow(t('returnUrl'), order.return_url)}
${detailRow(t('remark'), order.remark)}
${errorMessage}
${cashierUrl !== undefined ? detailRow(t('cashier'), html`<a href="${cashierUrl}">${cashierUrl}</a>`) : ''}
${voucher !== undefined ? detailRow(t('voucher'), html`<a href="${voucher}">${t('voucherLink')}</a> <span class="muted">${t('voucherHint')}</span>`) : ''}
</dl></div>
<div class="panel"><h2>${t('history')}</h2>${history}</div>
<div class="panel"><h2>${t('ledger')}</h2>${ledger}</div>
${pixReceived}${chainPanel(lang, order, chain)}${rail}${callbacks}`,
  });
}

/** A signed amount: "+R$ 10,00" or "-R$ 10,00". */
export function signed(lang: Language, amount: bigint, currency: string): string {
  return amount < 0n ? money(lang, amount, currency) : `+${money(lang, amount, currency)}`;
}

/** The console's pages for orders: search with totals on request and CSV export, and detail; and the overview of their figures. */
export function registerOrderPages(router: ConsoleRouter, deps: ConsoleServices): void {
  router.get('/console/orders', async (ctx, request, reply) => {
    const t = translator('console.orders', ctx.lang);
    const filters = filtersOf(request);
    const beforeAt = queryParam(request, 'before_at');
    const beforeId = queryParam(request, 'before_id');
    const { search, errors } = parseFilters(ctx, t, filters, beforeAt, beforeId);
    const pixReturns = await pixReturnsLink(ctx, deps);
    if (errors.length > 0)
      return listPage(ctx, reply, { filters, errors, orders: [], totals: { kind: 'none' }, paged: false, pixReturns });
    const rows = await searchOrders(deps.store.read, search);
    const orders = rows.slice(0, PAGE_SIZE);
    const last = orders.at(-1);
    const olderLink =
      rows.length > PAGE_SIZE && last !== undefined
        ? filterLink(filters, { before_at: String(last.created_at), before_id: last.id })
        : undefined;
    const days = totalsDays(filters, ctx.now);
    let totals: TotalsView = { kind: 'none' };
    if (queryParam(request, 'totals') === '1') {
      // Only the days the filters name, never a default: the page shows what was summed.
      const { from, until } = search;
      totals =
        days === undefined || from === undefined || until === undefined
          ? { kind: 'needsDays' }
          : { kind: 'summed', totals: await orderTotals(deps.store.read, { ...search, from, until }), ...days };
    } else if (orders.length > 0 || search.before !== undefined) {
      totals =
        days === undefined
          ? { kind: 'needsDays' }
          : { kind: 'offered', link: filterLink({ ...filters, ...days }, { totals: '1' }), ...days };
    }
    return listPage(ctx, reply, {
      filters,
      errors,
      orders,
      totals,
      olderLink,
      paged: search.before !== undefined,
      pixReturns,
    });
  });

  router.get('/console/orders.csv', async (ctx, request, reply) => {
    const t = translator('console.orders', ctx.lang);
    const filters = filtersOf(request);
    const { search, errors } = parseFilters(ctx, t, filters, '', '');
    if (errors.length > 0) {
      const pixReturns = await pixReturnsLink(ctx, deps);
      return listPage(ctx, reply, { filters, errors, orders: [], totals: { kind: 'none' }, paged: false, pixReturns });
    }
    const filename = `cashgate-orders-${ctx.merchantId}-${new Date(ctx.now).toISOString().slice(0, 10)}.csv`;
    return reply
      .code(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${filename}"`)
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .send(Readable.from(orderCsvLines(deps, search)));
  });

  router.get('/console/orders/:orderId', (ctx, request, reply) => detailPage(ctx, deps, request, reply));
}
