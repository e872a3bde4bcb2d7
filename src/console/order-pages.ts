/**
 * The console's order pages: the search (exact id, filters, newest first, keyset paging) and an
 * order's detail (its fields, state history, ledger entries, what happened on chain, voucher and
 * callbacks).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { voucherLink, hasVoucher } from '../brazil/voucher.js';
import { formatUnits, TOKEN_DECIMALS } from '../exchange/amounts.js';
import { exchangeDetails } from '../exchange/records.js';
import { html, type Html } from '../http/html.js';
import type { Language } from '../http/language.js';
import { eventsOfOrder, type OrderRow } from '../orders/queries.js';
import { payTypeText } from '../orders/records.js';
import { kenyaDetails } from '../kenya/kinds.js';
import { isKenyanMobile, maskKenyanMobile } from '../kenya/phone.js';
import { chainView, type ChainView } from '../rails/chain/chain-view.js';
import { railMessagesOfOrder } from '../rails/queries.js';
import { COLLECTION_STATUS, EXCHANGE_STATUS, isFinal, statusText, TRANSFER_STATUS } from '../orders/state-machine.js';
import type { OrderArea, OrderKind } from '../store/schema.js';
import { orderCallbacksPanel } from './callback-pages.js';
import { pixReceivedPanel, pixReturnsLink } from './pix-pages.js';
import { badge, dayRange, dayRangeLabels, errorSummary, notice, textField, type FieldError } from './forms.js';
import { consoleTexts, dateTime, money, translate, type Translator } from './i18n.js';
import type { ConsoleServices } from './plugin.js';
import { merchantOrder, orderEntries, searchOrders, type OrderCursor } from './queries.js';
import { queryParam, type ConsoleContext, type ConsoleRouter } from './router.js';

export const PAGE_SIZE = 50;

const AREAS: readonly OrderArea[] = ['ken', 'bra', 'exchange', 'cashier'];
const KINDS: readonly OrderKind[] = ['collection', 'transfer', 'fiat_to_token', 'token_to_fiat'];

/** Every status of each kind, from the state machine's constants. */
const STATUSES: Record<OrderKind, readonly number[]> = {
  collection: Object.values(COLLECTION_STATUS),
  transfer: Object.values(TRANSFER_STATUS),
  fiat_to_token: Object.values(EXCHANGE_STATUS),
  token_to_fiat: Object.values(EXCHANGE_STATUS),
};

/** The status each kind ends in when it worked. */
const SUCCESS: Record<OrderKind, number> = {
  collection: COLLECTION_STATUS.paid,
  transfer: TRANSFER_STATUS.succeeded,
  fiat_to_token: EXCHANGE_STATUS.complete,
  token_to_fiat: EXCHANGE_STATUS.complete,
};

const TEXTS = consoleTexts('orders', {
  title: ['Orders', 'Pedidos', 'Pedidos'],
  search: ['Order ID or external order ID', 'ID do pedido ou ID externo', 'ID del pedido o ID externo'],
  searchHint: [
    'The exact ID, as the API returned it or as you sent it.',
    'O ID exato, como a API o devolveu ou como você o enviou.',
    'El ID exacto, tal como lo devolvió la API o como lo enviaste.',
  ],
  area: ['Area', 'Área', 'Área'],
  kind: ['Kind', 'Tipo', 'Tipo'],
  status: ['Status', 'Status', 'Estado'],
  any: ['Any', 'Qualquer', 'Cualquiera'],
  apply: ['Search', 'Buscar', 'Buscar'],
  reset: ['Clear filters', 'Limpar filtros', 'Borrar filtros'],
  badArea: [
    'Area: choose one of the listed areas.',
    'Área: escolha uma das áreas da lista.',
    'Área: elige una de las áreas de la lista.',
  ],
  badKind: [
    'Kind: choose one of the listed kinds.',
    'Tipo: escolha um dos tipos da lista.',
    'Tipo: elige uno de los tipos de la lista.',
  ],
  badStatus: [
    'Status: choose one of the listed statuses.',
    'Status: escolha um dos status da lista.',
    'Estado: elige uno de los estados de la lista.',
  ],
  badPage: [
    'Page: the paging link is damaged. Start the search again.',
    'Página: o link de paginação está danificado. Refaça a busca.',
    'Página: el enlace de paginación está dañado. Vuelve a buscar.',
  ],
  badQuery: [
    'Order ID: at most 128 characters.',
    'ID do pedido: no máximo 128 caracteres.',
    'ID del pedido: como máximo 128 caracteres.',
  ],
  empty: [
    'No orders match these filters.',
    'Nenhum pedido corresponde a estes filtros.',
    'Ningún pedido coincide con estos filtros.',
  ],
  emptyAll: [
    'No orders yet. Orders you create through the API appear here.',
    'Ainda não há pedidos. Os pedidos criados pela API aparecem aqui.',
    'Aún no hay pedidos. Los pedidos que crees con la API aparecen aquí.',
  ],
  older: ['Older orders →', 'Pedidos mais antigos →', 'Pedidos más antiguos →'],
  newest: ['← Newest orders', '← Pedidos mais recentes', '← Pedidos más recientes'],
  created: ['Created', 'Criado', 'Creado'],
  orderId: ['Order ID', 'ID do pedido', 'ID del pedido'],
  externalOrderId: ['External order ID', 'ID externo do pedido', 'ID externo del pedido'],
  areaKind: ['Area / kind', 'Área / tipo', 'Área / tipo'],
  payType: ['Pay type', 'Tipo de pagamento', 'Tipo de pago'],
  amount: ['Amount', 'Valor', 'Importe'],
  fee: ['Fee', 'Tarifa', 'Comisión'],
  actualAmount: ['Actual amount', 'Valor efetivo', 'Importe efectivo'],
  remark: ['Remark', 'Observação', 'Observación'],
  tokenAmount: ['Token amount', 'Quantidade de tokens', 'Cantidad de tokens'],
  ordersCaption: ['Orders, newest first', 'Pedidos, mais recentes primeiro', 'Pedidos, los más recientes primero'],
  detailTitle: ['Order {orderId}', 'Pedido {orderId}', 'Pedido {orderId}'],
  backToOrders: ['← All orders', '← Todos os pedidos', '← Todos los pedidos'],
  channel: ['Channel', 'Canal', 'Canal'],
  currency: ['Currency', 'Moeda', 'Moneda'],
  paid: ['Paid', 'Pago', 'Pagado'],
  completed: ['Completed', 'Concluído', 'Completado'],
  cashierExpire: ['Cashier expires', 'Caixa expira', 'La caja vence'],
  notifyUrl: ['Notify URL', 'URL de notificação', 'URL de notificación'],
  returnUrl: ['Return URL', 'URL de retorno', 'URL de retorno'],
  errorMessage: ['Error message', 'Mensagem de erro', 'Mensaje de error'],
  cashier: ['Cashier page', 'Página do caixa', 'Página de la caja'],
  channelOrderId: ['Channel order ID', 'ID do pedido no canal', 'ID del pedido en el canal'],
  exchangeRate: ['Exchange rate', 'Taxa de câmbio', 'Tipo de cambio'],
  history: ['State history', 'Histórico de status', 'Historial de estados'],
  rail: ['Rail messages', 'Mensagens do meio de pagamento', 'Mensajes del medio de pago'],
  railHint: [
    'What Cashgate sent to the rail and what came back; credentials removed, phone numbers masked.',
    'O que o Cashgate enviou ao meio de pagamento e o que voltou; sem credenciais, telefones mascarados.',
    'Lo que Cashgate envió al medio de pago y lo que volvió; sin credenciales, teléfonos enmascarados.',
  ],
  railDirection: ['Way', 'Sentido', 'Sentido'],
  railEndpoint: ['Call', 'Chamada', 'Llamada'],
  railCode: ['Code', 'Código', 'Código'],
  railBody: ['Body', 'Conteúdo', 'Contenido'],
  mpesaReceipt: ['M-Pesa receipt', 'Recibo M-Pesa', 'Recibo M-Pesa'],
  mpesaPhone: ['Paid from', 'Pago pelo telefone', 'Pagado desde'],
  receiverName: ['Receiver', 'Recebedor', 'Receptor'],
  time: ['Time', 'Hora', 'Hora'],
  event: ['Event', 'Evento', 'Evento'],
  change: ['From → to', 'De → para', 'De → a'],
  source: ['Source', 'Origem', 'Origen'],
  noHistory: ['No status changes yet.', 'Ainda sem mudanças de status.', 'Aún sin cambios de estado.'],
  ledger: ['Ledger entries', 'Lançamentos contábeis', 'Asientos contables'],
  journalKind: ['Journal', 'Lançamento', 'Asiento'],
  account: ['Account', 'Conta', 'Cuenta'],
  memo: ['Memo', 'Memorando', 'Nota'],
  noEntries: [
    'This order has moved no money in your accounts.',
    'Este pedido não movimentou dinheiro nas suas contas.',
    'Este pedido no ha movido dinero en tus cuentas.',
  ],
  voucher: ['Voucher', 'Comprovante', 'Comprobante'],
  voucherLink: ['Open the PDF voucher', 'Abrir o comprovante em PDF', 'Abrir el comprobante en PDF'],
  voucherHint: [
    'Anyone holding this link can open the voucher.',
    'Qualquer pessoa com este link pode abrir o comprovante.',
    'Cualquiera que tenga este enlace puede abrir el comprobante.',
  ],
  retriggered: ['Callback re-triggered.', 'Callback reenviado.', 'Callback reenviado.'],
  available: ['available', 'disponível', 'disponible'],
  frozen: ['frozen', 'congelado', 'congelado'],
  awaiting_settlement: ['awaiting settlement', 'aguardando liquidação', 'pendiente de liquidación'],
  ken: ['Kenya', 'Quênia', 'Kenia'],
  bra: ['Brazil', 'Brasil', 'Brasil'],
  exchange: ['Exchange', 'Câmbio', 'Cambio'],
  cashierArea: ['Aggregate cashier', 'Caixa agregado', 'Caja agregada'],
  collection: ['collection', 'cobrança', 'cobro'],
  transfer: ['transfer', 'transferência', 'transferencia'],
  fiat_to_token: ['fiat → token', 'moeda → token', 'fiat → token'],
  token_to_fiat: ['token → fiat', 'token → moeda', 'token → fiat'],
});

type T = Translator<keyof typeof TEXTS>;

const CHAIN_TEXTS = consoleTexts('chain', {
  title: ['On chain', 'Na blockchain', 'En la cadena'],
  hint: [
    'What Cashgate saw and did on the blockchain for this order. Amounts in USDT; times in UTC.',
    'O que o Cashgate viu e fez na blockchain para este pedido. Valores em USDT; horários em UTC.',
    'Lo que Cashgate vio e hizo en la cadena de bloques para este pedido. Importes en USDT; horas en UTC.',
  ],
  send: ['Token send', 'Envio de tokens', 'Envío de tokens'],
  network: ['Network', 'Rede', 'Red'],
  state: ['State', 'Situação', 'Estado'],
  from: ['From (Cashgate hot wallet)', 'De (carteira quente do Cashgate)', 'Desde (billetera caliente de Cashgate)'],
  to: ['To', 'Para', 'A'],
  amount: ['Amount', 'Valor', 'Importe'],
  txHash: ['Transaction', 'Transação', 'Transacción'],
  block: ['Block', 'Bloco', 'Bloque'],
  confirmations: ['Confirmations', 'Confirmações', 'Confirmaciones'],
  failure: ['Why it failed', 'Motivo da falha', 'Motivo del fallo'],
  attempts: ['Transactions signed', 'Transações assinadas', 'Transacciones firmadas'],
  attemptsHint: [
    'Oldest first. A transaction stuck unmined is replaced by a new one; only one of them can be mined.',
    'Da mais antiga à mais recente. Uma transação presa sem ser minerada é substituída por outra; só uma delas pode ser minerada.',
    'De la más antigua a la más reciente. Una transacción atascada sin minar se reemplaza por otra; solo una de ellas puede minarse.',
  ],
  signedAt: ['Signed', 'Assinada', 'Firmada'],
  outcome: ['Outcome', 'Resultado', 'Resultado'],
  queued: ['Waiting to be sent', 'Aguardando envio', 'Esperando el envío'],
  signed: ['Signed, not yet broadcast', 'Assinado, ainda não transmitido', 'Firmado, aún no transmitido'],
  broadcast: [
    'Broadcast, waiting for confirmations',
    'Transmitido, aguardando confirmações',
    'Transmitido, esperando confirmaciones',
  ],
  confirmed: ['Confirmed: final', 'Confirmado: definitivo', 'Confirmado: definitivo'],
  failed: ['Failed', 'Falhou', 'Falló'],
  cancelled: ['Cancelled', 'Cancelado', 'Cancelado'],
  open: ['Pending', 'Pendente', 'Pendiente'],
  mined: ['Mined', 'Minerada', 'Minada'],
  replaced: [
    'Replaced by a later transaction',
    'Substituída por uma transação posterior',
    'Reemplazada por una transacción posterior',
  ],
  reverted: ['Reverted: {reason}', 'Revertida: {reason}', 'Revertida: {reason}'],
  refused: ['Refused by the node: {reason}', 'Recusada pelo nó: {reason}', 'Rechazada por el nodo: {reason}'],
  deposits: ['Deposits received', 'Depósitos recebidos', 'Depósitos recibidos'],
  depositsHint: [
    'Every transfer to this order’s deposit address. One counts once it is final (deep enough that no reorganisation can take it).',
    'Cada transferência para o endereço de depósito deste pedido. Ela conta quando se torna definitiva (profunda o bastante para que nenhuma reorganização a desfaça).',
    'Cada transferencia a la dirección de depósito de este pedido. Cuenta cuando es definitiva (lo bastante profunda para que ninguna reorganización la deshaga).',
  ],
  seenAt: ['Seen', 'Vista', 'Vista'],
  sender: ['Sender', 'Remetente', 'Remitente'],
  depositState: ['Status', 'Status', 'Estado'],
  reported: ['Final', 'Definitivo', 'Definitivo'],
  seen: ['Waiting for confirmations', 'Aguardando confirmações', 'Esperando confirmaciones'],
});

type ChainT = Translator<keyof typeof CHAIN_TEXTS>;
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
  const t = translate(CHAIN_TEXTS, lang);
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
            : html`<h3>${t('attempts')}</h3><p class="muted">${t('attemptsHint')}</p><div class="table" tabindex="0"><table><thead><tr><th>${t('txHash')}</th><th>${t('signedAt')}</th><th>${t('outcome')}</th></tr></thead><tbody>${send.attempts.map(
                (a) =>
                  html`<tr><td class="mono">${a.txHash}</td><td>${dateTime(lang, a.createdAt)}</td><td>${attemptOutcome(t, a.outcome)}</td></tr>`,
              )}</tbody></table></div>`
        }`;
  const depositPart =
    view.deposits.length === 0
      ? ''
      : html`<h3>${t('deposits')}</h3><p class="muted">${t('depositsHint')}</p><div class="table" tabindex="0"><table><thead><tr><th>${t('seenAt')}</th><th>${t('txHash')}</th><th>${t('sender')}</th><th class="num">${t('amount')}</th><th class="num">${t('block')}</th><th>${t('depositState')}</th></tr></thead><tbody>${view.deposits.map(
          (d) =>
            html`<tr><td>${dateTime(lang, d.seenAt)}</td><td class="mono">${d.txHash}</td><td class="mono">${d.from}</td><td class="num">${usdt(order, d.chain, d.units)}</td><td class="num">${d.blockNumber}</td><td>${d.state === 'reported' ? badge(t('reported'), 'ok') : badge(t('seen'), 'wait')}</td></tr>`,
        )}</tbody></table></div>`;
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

export function accountName(t: Translator<'available' | 'frozen' | 'awaiting_settlement'>, account: string): string {
  return account === 'available' || account === 'frozen' || account === 'awaiting_settlement' ? t(account) : account;
}

/** The status as a badge: its name and number; green when it worked, red when it ended otherwise, amber while it waits. */
export function statusBadge(kind: OrderKind, status: number): Html {
  const tone = !isFinal(kind, status) ? 'wait' : status === SUCCESS[kind] ? 'ok' : 'bad';
  return badge(`${statusText(kind, status)} (${status})`, tone);
}

/** The quoted token amount of an exchange order, as exact decimal text ("18.5 USDT"). */
function tokenAmount(order: OrderRow): string | undefined {
  if (order.kind !== 'fiat_to_token' && order.kind !== 'token_to_fiat') return undefined;
  try {
    const d = exchangeDetails(order);
    return `${formatUnits(BigInt(d.tokenUnits), d.tokenDecimals)} ${d.tokenType}`;
  } catch {
    return undefined;
  }
}

const amountOf = (lang: Language, order: OrderRow, minor: number | null): string =>
  minor === null ? '—' : money(lang, BigInt(minor), order.currency);

interface Filters {
  q: string;
  area: string;
  kind: string;
  status: string;
  from: string;
  to: string;
}

interface Parsed {
  search: Parameters<typeof searchOrders>[1];
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
  let status: number | undefined;
  if (f.status !== '') {
    const known = new Set((kind === undefined ? KINDS : [kind]).flatMap((k) => STATUSES[k]));
    if (/^\d{1,3}$/.test(f.status) && known.has(Number(f.status))) status = Number(f.status);
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
      status,
      from: days.range?.from,
      until: days.range?.until,
      before,
      limit: PAGE_SIZE + 1,
    },
  };
}

function select(name: string, label: string, options: Html[], error: FieldError | undefined): Html {
  return html`<div><label for="${name}">${label}</label>${error !== undefined ? html`<p class="error" id="${name}-error">${error.message}</p>` : ''}<select id="${name}" name="${name}"${
    error !== undefined ? html` aria-invalid="true" aria-describedby="${name}-error"` : ''
  }>${options}</select></div>`;
}

const option = (value: string, label: string, selected: boolean): Html =>
  html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;

function filterForm(t: T, lang: Language, f: Filters, errors: readonly FieldError[]): Html {
  const errorOf = (field: string) => errors.find((e) => e.field === field);
  let statusSelected = false;
  const statusGroups = KINDS.filter((k) => k !== 'token_to_fiat').map((k) => {
    const label = k === 'fiat_to_token' ? t('exchange') : kindName(t, k);
    return html`<optgroup label="${label}">${STATUSES[k].map((s) => {
      const chosen =
        !statusSelected &&
        f.status === String(s) &&
        (f.kind === '' || f.kind === k || (k === 'fiat_to_token' && f.kind === 'token_to_fiat'));
      if (chosen) statusSelected = true;
      return option(String(s), `${s} ${statusText(k, s)}`, chosen);
    })}</optgroup>`;
  });
  return html`<form method="get" action="/console/orders" class="panel" novalidate>
${textField({ name: 'q', label: t('search'), type: 'search', value: f.q, hint: t('searchHint'), errors })}
<div class="filters">
${select('area', t('area'), [option('', t('any'), f.area === ''), ...AREAS.map((a) => option(a, areaName(t, a), f.area === a))], errorOf('area'))}
${select('kind', t('kind'), [option('', t('any'), f.kind === ''), ...KINDS.map((k) => option(k, kindName(t, k), f.kind === k))], errorOf('kind'))}
${select('status', t('status'), [option('', t('any'), f.status === ''), ...statusGroups], errorOf('status'))}
<div>${textField({ name: 'from', label: dayRangeLabels(lang).from, type: 'date', value: f.from, errors })}</div>
<div>${textField({ name: 'to', label: dayRangeLabels(lang).to, type: 'date', value: f.to, errors })}</div>
</div>
<button type="submit">${t('apply')}</button> <a class="button secondary" href="/console/orders">${t('reset')}</a></form>`;
}

function orderRow(lang: Language, t: T, order: OrderRow): Html {
  const token = tokenAmount(order);
  return html`<tr><td>${dateTime(lang, order.created_at)}</td><td><a class="mono" href="/console/orders/${encodeURIComponent(order.id)}">${order.id}</a></td>
<td class="mono">${order.external_order_id}</td><td>${areaName(t, order.area)} / ${kindName(t, order.kind)}</td><td>${payTypeText(order.pay_type)} (${order.pay_type})</td>
<td class="num">${amountOf(lang, order, order.amount)}${token !== undefined ? html`<br><span class="muted">${token}</span>` : ''}</td>
<td class="num">${amountOf(lang, order, order.fee)}</td><td class="num">${amountOf(lang, order, order.actual_amount)}</td>
<td>${statusBadge(order.kind, order.status)}</td><td>${order.remark ?? ''}</td></tr>`;
}

function listPage(
  ctx: ConsoleContext,
  reply: FastifyReply,
  input: {
    filters: Filters;
    errors: FieldError[];
    orders: OrderRow[];
    olderLink?: string | undefined;
    paged: boolean;
    pixReturns: Html;
  },
): FastifyReply {
  const t = translate(TEXTS, ctx.lang);
  const f = input.filters;
  const filtered = Object.values(f).some((v) => v !== '');
  const table =
    input.orders.length === 0
      ? html`<p>${filtered || input.paged ? t('empty') : t('emptyAll')}</p>`
      : html`<div class="table" tabindex="0"><table><caption class="muted">${t('ordersCaption')}</caption><thead><tr><th>${t('created')}</th><th>${t('orderId')}</th><th>${t('externalOrderId')}</th><th>${t('areaKind')}</th><th>${t('payType')}</th>
<th class="num">${t('amount')}</th><th class="num">${t('fee')}</th><th class="num">${t('actualAmount')}</th><th>${t('status')}</th><th>${t('remark')}</th></tr></thead>
<tbody>${input.orders.map((o) => orderRow(ctx.lang, t, o))}</tbody></table></div>`;
  const pager =
    input.olderLink !== undefined || input.paged
      ? html`<nav class="pager">${input.paged ? html`<a href="${filterLink(f)}">${t('newest')}</a>` : ''}${input.olderLink !== undefined ? html`<a href="${input.olderLink}">${t('older')}</a>` : ''}</nav>`
      : '';
  return ctx.page(reply, {
    status: input.errors.length > 0 ? 400 : 200,
    title: t('title'),
    section: 'orders',
    body: html`<h1>${t('title')}</h1>${errorSummary(ctx.lang, input.errors)}${filterForm(t, ctx.lang, f, input.errors)}<div class="panel">${table}${pager}</div>${input.pixReturns}`,
  });
}

function filterLink(f: Filters, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...f, ...extra })) if (value !== '') params.set(name, value);
  const query = params.toString();
  return query === '' ? '/console/orders' : `/console/orders?${query}`;
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
  const t = translate(TEXTS, ctx.lang);
  const orderId = (request.params as { orderId?: string }).orderId ?? '';
  const order = orderId.length > 64 ? undefined : await merchantOrder(deps.store.read, ctx.merchantId, orderId);
  if (order === undefined) return ctx.notFound(reply);
  const lang = ctx.lang;
  const [events, entries, railMessages, pixReceived, chain] = await Promise.all([
    eventsOfOrder(deps.store.read, order.id),
    orderEntries(deps.store.read, ctx.merchantId, order.id),
    railMessagesOfOrder(deps.store.read, order.id),
    pixReceivedPanel(ctx, deps, order.id),
    // Only exchange and cashier (USDT) orders have sends or deposit addresses.
    order.area === 'exchange' || order.area === 'cashier'
      ? chainView(deps.store.read, order.id, order.rail_ref)
      : undefined,
  ]);
  const mpesa = order.area === 'ken' ? kenyaDetails(order) : undefined;
  const rail =
    railMessages.length === 0
      ? ''
      : html`<div class="panel"><h2>${t('rail')}</h2><p class="muted">${t('railHint')}</p><div class="table" tabindex="0"><table><thead><tr><th>${t('time')}</th><th>${t('railDirection')}</th><th>${t('railEndpoint')}</th><th>${t('railCode')}</th><th>${t('railBody')}</th></tr></thead><tbody>${railMessages.map(
          (m) =>
            html`<tr><td>${dateTime(lang, m.at)}</td><td>${m.direction === 'out' ? '→' : '←'}</td><td class="mono">${m.endpoint}${m.disposition === null ? '' : ` (${m.disposition})`}</td><td class="mono">${m.code ?? ''}</td><td><details><summary class="mono">${m.ref ?? ''}</summary><pre class="mono">${[m.request, m.response].filter((part) => part !== null).join('\n')}</pre></details></td></tr>`,
        )}</tbody></table></div></div>`;
  const voucher = hasVoucher(order) ? await voucherLink(deps, order) : undefined;
  const final = isFinal(order.kind, order.status);
  const callbacks = await orderCallbacksPanel(ctx, deps, { orderId: order.id, final });
  const token = tokenAmount(order);
  let rate: string | undefined;
  if (token !== undefined) {
    try {
      rate = exchangeDetails(order).exchangeRate;
    } catch {
      rate = undefined;
    }
  }
  const statusOf = (status: number | null): Html | string => (status === null ? '—' : statusBadge(order.kind, status));
  const history =
    events.length === 0
      ? html`<p>${t('noHistory')}</p>`
      : html`<div class="table" tabindex="0"><table><thead><tr><th>${t('time')}</th><th>${t('event')}</th><th>${t('change')}</th><th>${t('source')}</th></tr></thead><tbody>${events.map(
          (e) =>
            html`<tr><td>${dateTime(lang, e.at)}</td><td class="mono">${e.event}</td><td>${statusOf(e.from_status)} → ${statusOf(e.to_status)}</td><td>${e.source}</td></tr>`,
        )}</tbody></table></div>`;
  const ledger =
    entries.length === 0
      ? html`<p>${t('noEntries')}</p>`
      : html`<div class="table" tabindex="0"><table><thead><tr><th>${t('time')}</th><th>${t('journalKind')}</th><th>${t('account')}</th><th class="num">${t('amount')}</th><th>${t('memo')}</th></tr></thead><tbody>${entries.map(
          (e) =>
            html`<tr><td>${dateTime(lang, e.createdAt)}</td><td class="mono">${e.journalKind}</td><td>${accountName(t, e.account)}</td><td class="num">${signed(lang, e.amount, e.currency)}</td><td>${e.memo ?? ''}</td></tr>`,
        )}</tbody></table></div>`;
  return ctx.page(reply, {
    title: t('detailTitle', { orderId: order.id }),
    section: 'orders',
    body: html`<p><a href="/console/orders">${t('backToOrders')}</a></p><h1>${t('detailTitle', { orderId: order.id })}</h1>${notice(queryParam(request, 'done') === 'retriggered' ? t('retriggered') : undefined)}
<div class="panel"><dl>
${detailRow(t('orderId'), html`<code>${order.id}</code>`)}
${detailRow(t('externalOrderId'), html`<code>${order.external_order_id}</code>`)}
${detailRow(t('channelOrderId'), order.channel_order_id)}
${mpesa?.mpesaReceipt !== undefined ? detailRow(t('mpesaReceipt'), html`<code>${mpesa.mpesaReceipt}</code>`) : ''}
${mpesa?.mpesaPhone !== undefined && isKenyanMobile(mpesa.mpesaPhone) ? detailRow(t('mpesaPhone'), maskKenyanMobile(mpesa.mpesaPhone)) : ''}
${mpesa?.receiverName !== undefined ? detailRow(t('receiverName'), mpesa.receiverName) : ''}
${detailRow(t('areaKind'), `${areaName(t, order.area)} / ${kindName(t, order.kind)}`)}
${detailRow(t('channel'), order.channel_type)}
${detailRow(t('payType'), `${payTypeText(order.pay_type)} (${order.pay_type})`)}
${detailRow(t('status'), statusBadge(order.kind, order.status))}
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
${order.error_msg !== null || order.error_msg_en !== null ? detailRow(t('errorMessage'), [order.error_msg ?? '', order.error_msg_en !== null && order.error_msg_en !== order.error_msg ? ` / ${order.error_msg_en}` : ''].join('')) : ''}
${order.cashier_id !== null ? detailRow(t('cashier'), html`<a href="${`${deps.publicBaseUrl}/cashier/${order.cashier_id}`}">${`${deps.publicBaseUrl}/cashier/${order.cashier_id}`}</a>`) : ''}
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

/** The console's pages for orders: search and detail. */
export function registerOrderPages(router: ConsoleRouter, deps: ConsoleServices): void {
  router.get('/console/orders', async (ctx, request, reply) => {
    const t = translate(TEXTS, ctx.lang);
    const filters: Filters = {
      q: queryParam(request, 'q').trim(),
      area: queryParam(request, 'area'),
      kind: queryParam(request, 'kind'),
      status: queryParam(request, 'status'),
      from: queryParam(request, 'from'),
      to: queryParam(request, 'to'),
    };
    const beforeAt = queryParam(request, 'before_at');
    const beforeId = queryParam(request, 'before_id');
    const { search, errors } = parseFilters(ctx, t, filters, beforeAt, beforeId);
    const pixReturns = await pixReturnsLink(ctx, deps);
    if (errors.length > 0) return listPage(ctx, reply, { filters, errors, orders: [], paged: false, pixReturns });
    const rows = await searchOrders(deps.store.read, search);
    const orders = rows.slice(0, PAGE_SIZE);
    const last = orders.at(-1);
    const olderLink =
      rows.length > PAGE_SIZE && last !== undefined
        ? filterLink(filters, { before_at: String(last.created_at), before_id: last.id })
        : undefined;
    return listPage(ctx, reply, {
      filters,
      errors,
      orders,
      olderLink,
      paged: search.before !== undefined,
      pixReturns,
    });
  });

  router.get('/console/orders/:orderId', (ctx, request, reply) => detailPage(ctx, deps, request, reply));
}
