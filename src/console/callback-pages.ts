/**
 * The console's callback pages: the unified callback address, test callbacks sent at once, the log
 * of every attempt across orders, re-triggering failed callbacks in bulk, and the callback panel of
 * an order's detail page with its own re-trigger.
 */
import { Value } from '@sinclair/typebox/value';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OperatorError } from '../admin/failures.js';
import * as q from '../callbacks/queries.js';
import {
  redactUrl,
  toAttemptView,
  toEventView,
  type CallbackAttemptView,
  type CallbackEventView,
} from '../callbacks/service.js';
import { TEST_CALLBACK_KIND } from '../callbacks/test-callbacks.js';
import { html, type Html } from '../http/html.js';
import { CallbackUrl } from '../merchants/schemas.js';
import {
  badge,
  dayRange,
  dayRangeLabels,
  dayStart,
  errorSummary,
  notice,
  textField,
  type FieldError,
} from './forms.js';
import { consoleTexts, dateTime, translate, type Translator } from './i18n.js';
import type { ConsoleServices } from './plugin.js';
import { merchantOrder } from './queries.js';
import { formOf, queryParam, seeOther, type ConsoleContext, type ConsoleRouter } from './router.js';

/** Attempts per page of the log. */
export const LOG_PAGE_SIZE = 50;
/** Orders re-triggered by one bulk submission at most. */
export const RETRIGGER_CAP = 500;
/** Characters of a response excerpt shown in a table cell (the rest behind a disclosure). */
const EXCERPT_CHARS = 120;
/** Events without a target listed under the log. */
const NO_TARGET_SHOWN = 10;

const TEXTS = consoleTexts('callbacks', {
  title: ['Callbacks', 'Callbacks', 'Callbacks'],
  // Unified address
  addressTitle: ['Unified callback address', 'Endereço unificado de callback', 'Dirección unificada de callback'],
  addressLead: [
    'Cashgate sends an order’s result to this address when the order becomes final. An order created with its own notifyUrl always goes to that notifyUrl instead: the order’s notifyUrl has priority.',
    'A Cashgate envia o resultado de um pedido para este endereço quando o pedido se torna final. Um pedido criado com o seu próprio notifyUrl vai sempre para esse notifyUrl: o notifyUrl do pedido tem prioridade.',
    'Cashgate envía el resultado de un pedido a esta dirección cuando el pedido pasa a ser final. Un pedido creado con su propio notifyUrl va siempre a ese notifyUrl: el notifyUrl del pedido tiene prioridad.',
  ],
  addressLabel: ['Callback address (URL)', 'Endereço de callback (URL)', 'Dirección de callback (URL)'],
  addressHint: [
    'An http:// or https:// address, at most 2048 characters. Leave it empty to remove the address.',
    'Um endereço http:// ou https://, com no máximo 2048 caracteres. Deixe vazio para remover o endereço.',
    'Una dirección http:// o https://, de 2048 caracteres como máximo. Déjala vacía para quitar la dirección.',
  ],
  addressBad: [
    'Callback address: enter an http:// or https:// URL of at most 2048 characters.',
    'Endereço de callback: informe uma URL http:// ou https:// com no máximo 2048 caracteres.',
    'Dirección de callback: introduce una URL http:// o https:// de 2048 caracteres como máximo.',
  ],
  addressSave: ['Save address', 'Salvar endereço', 'Guardar dirección'],
  addressSet: [
    'The unified callback address was saved.',
    'O endereço unificado de callback foi salvo.',
    'Se guardó la dirección unificada de callback.',
  ],
  addressCleared: [
    'The unified callback address was removed. Orders without a notifyUrl get no callback now.',
    'O endereço unificado de callback foi removido. Pedidos sem notifyUrl agora não recebem callback.',
    'Se quitó la dirección unificada de callback. Los pedidos sin notifyUrl ya no reciben callback.',
  ],
  current: ['Current address', 'Endereço atual', 'Dirección actual'],
  notSet: ['not set', 'não definido', 'no definida'],
  // Test callback
  testTitle: ['Send a test callback', 'Enviar um callback de teste', 'Enviar un callback de prueba'],
  testLead: [
    'Sends a signed test callback now and shows what your endpoint answered. Its body says notifyType "test"; it carries no amount or status. Answer HTTP 200 to acknowledge it.',
    'Envia agora um callback de teste assinado e mostra o que o seu endpoint respondeu. O corpo diz notifyType "test"; não traz valor nem status. Responda HTTP 200 para confirmá-lo.',
    'Envía ahora un callback de prueba firmado y muestra lo que respondió tu endpoint. Su cuerpo dice notifyType "test"; no lleva importe ni estado. Responde HTTP 200 para confirmarlo.',
  ],
  testUrl: ['Send to (URL)', 'Enviar para (URL)', 'Enviar a (URL)'],
  testUrlHint: [
    'Leave empty to use the unified callback address.',
    'Deixe vazio para usar o endereço unificado de callback.',
    'Déjalo vacío para usar la dirección unificada de callback.',
  ],
  testUrlBad: [
    'Send to: enter an http:// or https:// URL of at most 2048 characters, or leave it empty.',
    'Enviar para: informe uma URL http:// ou https:// com no máximo 2048 caracteres, ou deixe vazio.',
    'Enviar a: introduce una URL http:// o https:// de 2048 caracteres como máximo, o déjalo vacío.',
  ],
  testSend: ['Send test callback', 'Enviar callback de teste', 'Enviar callback de prueba'],
  noKey: [
    'There is no active API key to sign callbacks with (a new or enabled key counts once its activation delay is over). Create or enable a key first:',
    'Não há chave de API ativa para assinar callbacks (uma chave nova ou reativada conta quando o atraso de ativação termina). Crie ou ative uma chave primeiro:',
    'No hay ninguna clave de API activa para firmar callbacks (una clave nueva o reactivada cuenta cuando termina su retraso de activación). Crea o activa una clave primero:',
  ],
  keysLink: ['API keys', 'Chaves de API', 'Claves de API'],
  noTargetTest: [
    'Nothing was sent: there is no unified callback address and no address was entered.',
    'Nada foi enviado: não há endereço unificado de callback e nenhum endereço foi informado.',
    'No se envió nada: no hay dirección unificada de callback y no se introdujo ninguna dirección.',
  ],
  notSentNow: [
    'The test callback was queued but not sent yet; its attempt will appear in the log below.',
    'O callback de teste foi enfileirado mas ainda não foi enviado; a tentativa aparecerá no log abaixo.',
    'El callback de prueba quedó en cola pero aún no se envió; su intento aparecerá en el registro de abajo.',
  ],
  resultTitle: ['Result', 'Resultado', 'Resultado'],
  target: ['Target URL', 'URL de destino', 'URL de destino'],
  httpStatus: ['HTTP status', 'Status HTTP', 'Estado HTTP'],
  latency: ['Latency', 'Latência', 'Latencia'],
  latencyMs: ['{ms} ms', '{ms} ms', '{ms} ms'],
  outcome: ['Outcome', 'Resultado', 'Resultado'],
  error: ['Error', 'Erro', 'Error'],
  response: ['Response', 'Resposta', 'Respuesta'],
  responseFull: [
    'Whole response (first 4 KB)',
    'Resposta inteira (primeiros 4 KB)',
    'Respuesta completa (primeros 4 KB)',
  ],
  notifyId: ['notify_id', 'notify_id', 'notify_id'],
  body: ['Body sent', 'Corpo enviado', 'Cuerpo enviado'],
  signedWith: [
    'Sent as JSON with the headers access_key ({key}), timestamp, nonce, sign and notify_id. The sign is HMAC-SHA1 over the body’s members plus access_key, timestamp and nonce, with the secret of the key {key}; each attempt has its own timestamp and nonce.',
    'Enviado como JSON com os cabeçalhos access_key ({key}), timestamp, nonce, sign e notify_id. O sign é HMAC-SHA1 sobre os membros do corpo mais access_key, timestamp e nonce, com o segredo da chave {key}; cada tentativa tem o seu próprio timestamp e nonce.',
    'Enviado como JSON con las cabeceras access_key ({key}), timestamp, nonce, sign y notify_id. El sign es HMAC-SHA1 sobre los miembros del cuerpo más access_key, timestamp y nonce, con el secreto de la clave {key}; cada intento tiene su propio timestamp y nonce.',
  ],
  none: ['—', '—', '—'],
  // Outcomes and states
  delivered: ['delivered', 'entregue', 'entregado'],
  failed: ['failed', 'falhou', 'fallido'],
  refused: ['refused', 'recusado', 'rechazado'],
  interrupted: ['interrupted', 'interrompido', 'interrumpido'],
  pending: ['pending', 'pendente', 'pendiente'],
  delivering: ['delivering', 'entregando', 'entregando'],
  no_target: ['no address', 'sem endereço', 'sin dirección'],
  automatic: ['automatic', 'automático', 'automático'],
  manual: ['manual', 'manual', 'manual'],
  test: ['test', 'teste', 'prueba'],
  // Log
  logTitle: ['Callback log', 'Log de callbacks', 'Registro de callbacks'],
  logLead: [
    'Every delivery attempt of your callbacks, newest first, {n} per page. Times are UTC.',
    'Todas as tentativas de entrega dos seus callbacks, das mais novas para as mais antigas, {n} por página. Horários em UTC.',
    'Todos los intentos de entrega de tus callbacks, del más reciente al más antiguo, {n} por página. Horas en UTC.',
  ],
  failedOnly: ['Failed only', 'Só as falhas', 'Solo fallidos'],
  orderId: ['Order ID', 'ID do pedido', 'ID de pedido'],
  externalOrderId: ['External order ID', 'ID externo do pedido', 'ID externo del pedido'],
  event: ['Event', 'Evento', 'Evento'],
  anyEvent: ['Any event', 'Qualquer evento', 'Cualquier evento'],
  eventPayment: ['Payment (collections, cashier)', 'Pagamento (recebimentos, caixa)', 'Pago (cobros, caja)'],
  eventTransfer: ['Transfer', 'Transferência', 'Transferencia'],
  eventExchange: ['Exchange', 'Câmbio', 'Cambio'],
  eventTest: ['Test callback', 'Callback de teste', 'Callback de prueba'],
  eventBad: [
    'Event: choose one of the listed events.',
    'Evento: escolha um dos eventos da lista.',
    'Evento: elige uno de los eventos de la lista.',
  ],
  nextRetry: ['next retry at {time}', 'próxima tentativa em {time}', 'próximo reintento el {time}'],
  bulkNoneDays: [
    'Nothing was re-triggered: no callback failed for good (retries exhausted) in the UTC days from {from} to {to}.',
    'Nada foi disparado de novo: nenhum callback falhou de vez (tentativas esgotadas) nos dias UTC de {from} a {to}.',
    'No se volvió a disparar nada: ningún callback falló definitivamente (reintentos agotados) en los días UTC del {from} al {to}.',
  ],
  bulkNoneExternal: [
    'Nothing was re-triggered: callbacks failed for good in the UTC days from {from} to {to}, but none for the external order ID “{external}”.',
    'Nada foi disparado de novo: houve callbacks que falharam de vez nos dias UTC de {from} a {to}, mas nenhum do ID externo “{external}”.',
    'No se volvió a disparar nada: hubo callbacks fallidos definitivamente en los días UTC del {from} al {to}, pero ninguno del ID externo «{external}».',
  ],
  bulkNoneEvent: [
    'Nothing was re-triggered: callbacks failed for good in the UTC days from {from} to {to}{external}, but none of the event “{event}”.',
    'Nada foi disparado de novo: houve callbacks que falharam de vez nos dias UTC de {from} a {to}{external}, mas nenhum do evento “{event}”.',
    'No se volvió a disparar nada: hubo callbacks fallidos definitivamente en los días UTC del {from} al {to}{external}, pero ninguno del evento «{event}».',
  ],
  bulkForExternal: [
    ' for the external order ID “{external}”',
    ' do ID externo “{external}”',
    ' del ID externo «{external}»',
  ],
  bulkNoneResent: [
    'Nothing was re-triggered: {n} callback(s) failed for good in the UTC days from {from} to {to} under these filters, but each of those orders had a callback delivered or under way since.',
    'Nada foi disparado de novo: {n} callback(s) falharam de vez nos dias UTC de {from} a {to} com estes filtros, mas cada um desses pedidos teve depois um callback entregue ou em andamento.',
    'No se volvió a disparar nada: {n} callback(s) fallaron definitivamente en los días UTC del {from} al {to} con estos filtros, pero cada uno de esos pedidos tuvo después un callback entregado o en curso.',
  ],
  bulkFiltersHint: [
    'Optional: narrow it to one external order ID or one event.',
    'Opcional: restrinja a um ID externo de pedido ou a um evento.',
    'Opcional: restríngelo a un ID externo de pedido o a un evento.',
  ],
  filter: ['Filter', 'Filtrar', 'Filtrar'],
  clear: ['Clear filters', 'Limpar filtros', 'Quitar filtros'],
  time: ['Time', 'Horário', 'Hora'],
  trigger: ['Trigger', 'Disparo', 'Disparo'],
  attemptNo: ['Attempt', 'Tentativa', 'Intento'],
  url: ['URL', 'URL', 'URL'],
  status: ['HTTP', 'HTTP', 'HTTP'],
  latencyCol: ['ms', 'ms', 'ms'],
  noAttempts: [
    'No callback attempts match.',
    'Nenhuma tentativa de callback corresponde.',
    'Ningún intento de callback coincide.',
  ],
  older: ['Older attempts', 'Tentativas mais antigas', 'Intentos más antiguos'],
  newest: ['Newest attempts', 'Tentativas mais recentes', 'Intentos más recientes'],
  testCallback: ['test callback', 'callback de teste', 'callback de prueba'],
  noTargetNote: [
    '{count} callback(s) in this view had no address (no notifyUrl on the order and no unified address) and were not sent. Set the unified address, then re-trigger them from the order.',
    '{count} callback(s) nesta visão não tinham endereço (sem notifyUrl no pedido e sem endereço unificado) e não foram enviados. Defina o endereço unificado e depois dispare-os de novo a partir do pedido.',
    '{count} callback(s) en esta vista no tenían dirección (sin notifyUrl en el pedido y sin dirección unificada) y no se enviaron. Define la dirección unificada y luego vuelve a dispararlos desde el pedido.',
  ],
  noTargetLatest: ['Newest without an address', 'Mais recentes sem endereço', 'Más recientes sin dirección'],
  created: ['Created', 'Criado', 'Creado'],
  // Bulk re-trigger
  bulkTitle: [
    'Re-trigger failed callbacks',
    'Disparar de novo callbacks que falharam',
    'Volver a disparar callbacks fallidos',
  ],
  bulkLead: [
    'Sends again, with each order’s current status, every callback that failed for good (retries exhausted) in these UTC days, one per order. Orders whose callback was delivered or is under way since are skipped. At most {cap} orders per submission: submit again for the rest.',
    'Envia de novo, com o status atual de cada pedido, todo callback que falhou de vez (tentativas esgotadas) nestes dias UTC, um por pedido. Pedidos cujo callback foi entregue ou está em andamento desde então são ignorados. No máximo {cap} pedidos por envio: envie de novo para o restante.',
    'Vuelve a enviar, con el estado actual de cada pedido, todo callback que falló definitivamente (reintentos agotados) en estos días UTC, uno por pedido. Se omiten los pedidos cuyo callback se entregó o está en curso desde entonces. Como máximo {cap} pedidos por envío: vuelve a enviar para el resto.',
  ],
  bulkSend: ['Re-trigger failed callbacks', 'Disparar de novo os que falharam', 'Volver a disparar los fallidos'],
  bulkConfirm: [
    'Send the failed callbacks of these days again, with each order’s current status?',
    'Enviar de novo os callbacks que falharam nestes dias, com o status atual de cada pedido?',
    '¿Volver a enviar los callbacks fallidos de estos días, con el estado actual de cada pedido?',
  ],
  bulkDone: [
    '{n} callbacks re-triggered. They are being delivered now; follow them in the log.',
    '{n} callbacks disparados de novo. Estão sendo entregues agora; acompanhe no log.',
    '{n} callbacks disparados de nuevo. Se están entregando ahora; síguelos en el registro.',
  ],
  bulkCapped: [
    'The limit of {cap} per submission was reached: submit again to re-trigger the rest.',
    'O limite de {cap} por envio foi atingido: envie de novo para disparar o restante.',
    'Se alcanzó el límite de {cap} por envío: vuelve a enviar para disparar el resto.',
  ],
  // Order panel
  orderTitle: ['Callbacks', 'Callbacks', 'Callbacks'],
  events: ['Callback events', 'Eventos de callback', 'Eventos de callback'],
  attempts: ['Delivery attempts', 'Tentativas de entrega', 'Intentos de entrega'],
  state: ['State', 'Estado', 'Estado'],
  attemptsCount: ['Attempts', 'Tentativas', 'Intentos'],
  noEvents: [
    'No callback was sent for this order yet: Cashgate sends one when the order becomes final.',
    'Nenhum callback foi enviado para este pedido ainda: a Cashgate envia um quando o pedido se torna final.',
    'Aún no se envió ningún callback para este pedido: Cashgate envía uno cuando el pedido pasa a ser final.',
  ],
  noOrderAttempts: [
    'No delivery attempt yet.',
    'Nenhuma tentativa de entrega ainda.',
    'Ningún intento de entrega todavía.',
  ],
  retrigger: ['Re-trigger callback now', 'Disparar o callback agora', 'Volver a disparar el callback ahora'],
  retriggerLead: [
    'Sends the callback again now, with the order’s current status and the notify_id of its latest callback (so your system can drop duplicates). One attempt, not retried.',
    'Envia o callback de novo agora, com o status atual do pedido e o notify_id do seu último callback (para o seu sistema descartar duplicatas). Uma tentativa, sem novas tentativas.',
    'Vuelve a enviar el callback ahora, con el estado actual del pedido y el notify_id de su último callback (para que tu sistema descarte duplicados). Un intento, sin reintentos.',
  ],
  notFinalWarning: [
    'This order is not final yet. Re-triggering its callback is discouraged: the payload shows the current status, not a final one. Cashgate still sends a callback when the order becomes final.',
    'Este pedido ainda não é final. Disparar o callback de novo não é recomendado: o payload mostra o status atual, não um final. A Cashgate ainda envia um callback quando o pedido se tornar final.',
    'Este pedido aún no es final. No se recomienda volver a disparar su callback: el payload muestra el estado actual, no uno final. Cashgate igualmente envía un callback cuando el pedido pase a ser final.',
  ],
  notFinalConfirm: [
    'This order is not final: the callback will show its current status. Send it anyway?',
    'Este pedido não é final: o callback mostrará o status atual. Enviar mesmo assim?',
    'Este pedido no es final: el callback mostrará su estado actual. ¿Enviarlo de todos modos?',
  ],
});

type T = Translator<keyof typeof TEXTS>;

/** The callback events merchants filter by (the spec's event kinds), as the order kinds that send them. */
const EVENTS = {
  payment: { text: 'eventPayment', kinds: ['ken.collection', 'bra.collection', 'cashier.collection'] },
  transfer: { text: 'eventTransfer', kinds: ['ken.transfer', 'bra.transfer'] },
  exchange: { text: 'eventExchange', kinds: ['exchange.fiat_to_token', 'exchange.token_to_fiat'] },
  test: { text: 'eventTest', kinds: [TEST_CALLBACK_KIND] },
} as const satisfies Record<string, { text: keyof typeof TEXTS; kinds: readonly string[] }>;
type EventName = keyof typeof EVENTS;

function isEventName(value: string): value is EventName {
  return Object.hasOwn(EVENTS, value);
}

/** The event filter's select. */
function eventSelect(t: T, name: string, value: string, error: FieldError | undefined): Html {
  return html`<label for="${name}">${t('event')}</label>${error !== undefined ? html`<p class="error" id="${name}-error">${error.message}</p>` : ''}<select id="${name}" name="${name}"${
    error !== undefined ? html` aria-invalid="true" aria-describedby="${name}-error"` : ''
  }><option value="">${t('anyEvent')}</option>${(Object.keys(EVENTS) as EventName[]).map(
    (e) => html`<option value="${e}"${e === value ? html` selected` : ''}>${t(EVENTS[e].text)}</option>`,
  )}</select>`;
}

/** The order ids an externalOrderId filter narrows to (undefined: no such filter). */
async function externalScope(
  deps: ConsoleServices,
  merchantId: string,
  external: string,
): Promise<string[] | undefined> {
  return external === '' ? undefined : q.ordersWithExternalId(deps.store.read, merchantId, external);
}

/** "next retry at …" when this attempt is its event's latest and the outbox will try again. */
function nextRetry(
  t: T,
  lang: ConsoleContext['lang'],
  attempt: { attemptNo: number },
  event: { state: string; attempts: number; nextAttemptAt: number | null } | undefined,
): Html {
  if (event === undefined || event.state !== 'pending' || event.nextAttemptAt === null) return html``;
  if (attempt.attemptNo !== event.attempts) return html``;
  return html`<br><span class="retry">${t('nextRetry', { time: dateTime(lang, event.nextAttemptAt) })}</span>`;
}
type Tone = 'ok' | 'bad' | 'wait' | 'plain';

const OUTCOME_TONE: Record<string, Tone> = {
  delivered: 'ok',
  failed: 'bad',
  refused: 'bad',
  interrupted: 'wait',
  pending: 'wait',
  delivering: 'wait',
  no_target: 'plain',
};

function outcomeBadge(t: T, outcome: string): Html {
  const known = outcome in OUTCOME_TONE ? (outcome as keyof typeof TEXTS) : undefined;
  return badge(known === undefined ? outcome : t(known), OUTCOME_TONE[outcome] ?? 'plain');
}

function triggerText(t: T, trigger: 'automatic' | 'manual', orderKind: string): string {
  return orderKind === TEST_CALLBACK_KIND ? `${t('test')} · ${t(trigger)}` : t(trigger);
}

/** The first characters of a response, with the whole of it (still text) behind a disclosure. */
function excerptCell(t: T, excerpt: string | null): Html {
  if (excerpt === null || excerpt === '') return html`${t('none')}`;
  if (excerpt.length <= EXCERPT_CHARS) return html`<code>${excerpt}</code>`;
  return html`<details><summary><code>${excerpt.slice(0, EXCERPT_CHARS)}…</code></summary><pre>${excerpt}</pre></details>`;
}

function isCallbackUrl(value: string): boolean {
  return Value.Check(CallbackUrl, value);
}

interface LogQuery {
  failedOnly: boolean;
  orderId: string;
  external: string;
  event: string;
  from: string;
  to: string;
  before: string;
}

function logQueryOf(request: FastifyRequest): LogQuery {
  return {
    failedOnly: queryParam(request, 'failed') === '1',
    orderId: queryParam(request, 'order').trim().slice(0, 64),
    external: queryParam(request, 'external').trim().slice(0, 64),
    event: queryParam(request, 'event').slice(0, 16),
    from: queryParam(request, 'from').slice(0, 10),
    to: queryParam(request, 'to').slice(0, 10),
    before: queryParam(request, 'before').slice(0, 120),
  };
}

function logLink(query: LogQuery, before?: string): string {
  const params = new URLSearchParams();
  if (query.failedOnly) params.set('failed', '1');
  if (query.orderId !== '') params.set('order', query.orderId);
  if (query.external !== '') params.set('external', query.external);
  if (query.event !== '') params.set('event', query.event);
  if (query.from !== '') params.set('from', query.from);
  if (query.to !== '') params.set('to', query.to);
  if (before !== undefined) params.set('before', before);
  const text = params.toString();
  return `/console/callbacks${text === '' ? '' : `?${text}`}#log`;
}

/** `before=<startedAt>.<attemptId>`: the keyset of the log's next page. */
function parseBefore(value: string): { startedAt: number; id: string } | undefined {
  const match = /^(\d{1,16})\.([A-Za-z0-9_]{1,64})$/.exec(value);
  return match === null ? undefined : { startedAt: Number(match[1]), id: match[2] ?? '' };
}

interface PageInput {
  status?: number;
  errors?: FieldError[];
  /** Values typed in forms, shown again with their errors. */
  addressValue?: string;
  testUrlValue?: string;
  bulkFrom?: string;
  bulkTo?: string;
  bulkExternal?: string;
  bulkEvent?: string;
  /** The outcome of a test callback sent by this request. */
  testResult?: Html;
  done?: Html;
}

async function callbacksPage(
  ctx: ConsoleContext,
  deps: ConsoleServices,
  request: FastifyRequest,
  reply: FastifyReply,
  input: PageInput = {},
): Promise<FastifyReply> {
  const t = translate(TEXTS, ctx.lang);
  const errors = [...(input.errors ?? [])];
  const merchant = await deps.merchants.getMerchant(ctx.merchantId);
  const query = logQueryOf(request);
  const filterRange = dayRange(ctx.lang, { from: query.from, to: query.to, required: false });
  errors.push(...filterRange.errors);
  const eventError =
    query.event !== '' && !isEventName(query.event) ? { field: 'event', message: t('eventBad') } : undefined;
  if (eventError !== undefined) errors.push(eventError);
  const filter: q.MerchantLogFilter = {
    failedOnly: query.failedOnly,
    orderId: query.orderId === '' ? undefined : query.orderId,
    orderIds: await externalScope(deps, ctx.merchantId, query.external),
    orderKinds: isEventName(query.event) ? EVENTS[query.event].kinds : undefined,
    from: filterRange.range?.from,
    to: filterRange.range?.until,
    before: parseBefore(query.before),
  };
  const rows = await q.attemptsOfMerchant(deps.store.read, ctx.merchantId, filter, LOG_PAGE_SIZE + 1);
  const more = rows.length > LOG_PAGE_SIZE;
  const page = rows.slice(0, LOG_PAGE_SIZE);
  const last = page.at(-1);
  const noTarget = await q.noTargetEventsOfMerchant(deps.store.read, ctx.merchantId, filter, NO_TARGET_SHOWN);
  const status = input.status ?? (filterRange.errors.length > 0 || eventError !== undefined ? 400 : 200);
  const fieldErrors = errors;

  const logRows = page.map(
    (a) =>
      html`<tr><td>${dateTime(ctx.lang, a.started_at)}</td><td>${
        a.order_kind === TEST_CALLBACK_KIND
          ? html`<code>${a.order_id}</code> <span class="muted">(${t('testCallback')})</span>`
          : html`<a href="/console/orders/${encodeURIComponent(a.order_id)}"><code>${a.order_id}</code></a>`
      }</td><td>${triggerText(t, a.trigger, a.order_kind)}</td><td class="num">${a.attempt_no}</td><td><code>${redactUrl(a.url) ?? ''}</code></td><td class="num">${
        a.http_status ?? t('none')
      }</td><td class="num">${a.latency_ms}</td><td>${outcomeBadge(t, a.outcome)}${nextRetry(
        t,
        ctx.lang,
        { attemptNo: a.attempt_no },
        { state: a.event_state, attempts: a.event_attempts, nextAttemptAt: a.next_attempt_at },
      )}${a.error !== null ? html`<br><span class="muted">${a.error}</span>` : ''}</td><td>${excerptCell(
        t,
        a.response_excerpt,
      )}</td></tr>`,
  );

  const body = html`<h1>${t('title')}</h1>${input.done ?? ''}${errorSummary(ctx.lang, fieldErrors)}
<section class="panel" id="address"><h2>${t('addressTitle')}</h2><p>${t('addressLead')}</p>
<dl><dt>${t('current')}</dt><dd>${merchant.callbackUrl === null ? t('notSet') : html`<code>${redactUrl(merchant.callbackUrl)}</code>`}</dd></dl>
<form method="post" action="/console/callbacks/address" novalidate>${ctx.csrf}
${textField({ name: 'url', label: t('addressLabel'), type: 'url', value: input.addressValue ?? merchant.callbackUrl ?? '', hint: t('addressHint'), maxlength: 2048, errors: fieldErrors })}
<button type="submit">${t('addressSave')}</button></form></section>
<section class="panel" id="test"><h2>${t('testTitle')}</h2><p>${t('testLead')}</p>
<form method="post" action="/console/callbacks/test#test" novalidate>${ctx.csrf}
${textField({ name: 'test-url', label: t('testUrl'), type: 'url', value: input.testUrlValue ?? '', hint: t('testUrlHint'), maxlength: 2048, errors: fieldErrors })}
<button type="submit">${t('testSend')}</button></form>${input.testResult ?? ''}</section>
<section class="panel" id="log"><h2>${t('logTitle')}</h2><p class="muted">${t('logLead', { n: LOG_PAGE_SIZE })}</p>
<form method="get" action="/console/callbacks" class="filters">
<label class="check"><input type="checkbox" name="failed" value="1"${query.failedOnly ? html` checked` : ''}> ${t('failedOnly')}</label>
<div>${textField({ name: 'order', label: t('orderId'), type: 'search', value: query.orderId, maxlength: 64 })}</div>
<div>${textField({ name: 'external', label: t('externalOrderId'), type: 'search', value: query.external, maxlength: 64 })}</div>
<div>${eventSelect(t, 'event', query.event, eventError)}</div>
<div>${textField({ name: 'from', label: dayRangeLabels(ctx.lang).from, type: 'date', value: query.from, errors: fieldErrors })}</div>
<div>${textField({ name: 'to', label: dayRangeLabels(ctx.lang).to, type: 'date', value: query.to, errors: fieldErrors })}</div>
<div><button type="submit">${t('filter')}</button><a class="button secondary" href="/console/callbacks#log">${t('clear')}</a></div></form>
${
  noTarget.count > 0
    ? html`<div class="warning" id="no-target"><p>${t('noTargetNote', { count: noTarget.count })}</p><details><summary>${t('noTargetLatest')}</summary><div class="table" tabindex="0"><table><thead><tr><th>${t('created')}</th><th>${t('orderId')}</th><th>${t('trigger')}</th></tr></thead><tbody>${noTarget.rows.map(
        (e) =>
          html`<tr><td>${dateTime(ctx.lang, e.created_at)}</td><td>${
            e.order_kind === TEST_CALLBACK_KIND
              ? html`<code>${e.order_id}</code>`
              : html`<a href="/console/orders/${encodeURIComponent(e.order_id)}"><code>${e.order_id}</code></a>`
          }</td><td>${triggerText(t, e.trigger, e.order_kind)}</td></tr>`,
      )}</tbody></table></div></details></div>`
    : ''
}
${
  page.length === 0
    ? html`<p>${t('noAttempts')}</p>`
    : html`<div class="table" tabindex="0"><table><thead><tr><th>${t('time')}</th><th>${t('orderId')}</th><th>${t('trigger')}</th><th class="num">${t('attemptNo')}</th><th>${t('url')}</th><th class="num">${t(
        'status',
      )}</th><th class="num">${t('latencyCol')}</th><th>${t('outcome')}</th><th>${t('response')}</th></tr></thead><tbody>${logRows}</tbody></table></div>`
}
<p class="pager">${query.before !== '' ? html`<a href="${logLink(query)}">${t('newest')}</a>` : ''}${
    more && last !== undefined
      ? html`<a href="${logLink(query, `${last.started_at}.${last.id}`)}" rel="next">${t('older')}</a>`
      : ''
  }</p></section>
<section class="panel" id="retrigger"><h2>${t('bulkTitle')}</h2><p>${t('bulkLead', { cap: RETRIGGER_CAP })}</p>
<form method="post" action="/console/callbacks/retrigger-failed" data-confirm="${t('bulkConfirm')}" novalidate>${ctx.csrf}<div class="filters">
<div>${textField({ name: 'retrigger-from', label: dayRangeLabels(ctx.lang).from, type: 'date', value: input.bulkFrom ?? '', required: true, errors: fieldErrors })}</div>
<div>${textField({ name: 'retrigger-to', label: dayRangeLabels(ctx.lang).to, type: 'date', value: input.bulkTo ?? '', required: true, errors: fieldErrors })}</div></div>
<p class="muted">${t('bulkFiltersHint')}</p><div class="filters">
<div>${textField({ name: 'retrigger-external', label: t('externalOrderId'), value: input.bulkExternal ?? '', maxlength: 64, errors: fieldErrors })}</div>
<div>${eventSelect(
    t,
    'retrigger-event',
    input.bulkEvent ?? '',
    fieldErrors.find((e) => e.field === 'retrigger-event'),
  )}</div></div>
<button type="submit">${t('bulkSend')}</button></form></section>`;
  return ctx.page(reply, { status, title: t('title'), section: 'callbacks', body });
}

/** Why a bulk re-trigger found nothing, from the redirect's query (undefined when it gives no reason). */
function bulkNothingReason(t: T, request: FastifyRequest): string | undefined {
  const from = queryParam(request, 'rf').slice(0, 10);
  const to = queryParam(request, 'rt').slice(0, 10);
  if (dayStart(from) === undefined || dayStart(to) === undefined) return undefined;
  const externalValue = queryParam(request, 'rx').slice(0, 64);
  const event = queryParam(request, 're');
  const eventText = isEventName(event) ? t(EVENTS[event].text) : '';
  const external = externalValue === '' ? '' : t('bulkForExternal', { external: externalValue });
  switch (queryParam(request, 'why')) {
    case 'days':
      return t('bulkNoneDays', { from, to });
    case 'external':
      return t('bulkNoneExternal', { from, to, external: externalValue });
    case 'event':
      return t('bulkNoneEvent', { from, to, external, event: eventText });
    case 'resent': {
      const n = Number(queryParam(request, 'n'));
      return t('bulkNoneResent', { from, to, n: Number.isInteger(n) && n >= 0 ? n : 0 });
    }
    default:
      return undefined;
  }
}

/** What a test callback did, as the page shows it right after sending. */
function testResultHtml(
  t: T,
  ctx: ConsoleContext,
  event: CallbackEventView,
  attempt: CallbackAttemptView | undefined,
): Html {
  const sent = html`<dt>${t('notifyId')}</dt><dd><code>${event.notifyId}</code></dd><dt>${t('body')}</dt><dd><pre>${JSON.stringify(event.payload, null, 2)}</pre>
<p class="muted">${t('signedWith', { key: event.accessKey })}</p></dd>`;
  if (event.state === 'no_target') {
    return html`<div class="warning" role="status" id="test-result"><p>${t('noTargetTest')}</p></div>`;
  }
  if (attempt === undefined) {
    return html`<div class="warning" role="status" id="test-result"><p>${t('notSentNow')}</p><dl>${sent}</dl></div>`;
  }
  return html`<div id="test-result" role="status"><h3>${t('resultTitle')}</h3><dl>
<dt>${t('outcome')}</dt><dd>${outcomeBadge(t, attempt.outcome)}</dd>
<dt>${t('target')}</dt><dd><code>${attempt.url}</code></dd>
<dt>${t('httpStatus')}</dt><dd>${attempt.httpStatus ?? t('none')}</dd>
<dt>${t('latency')}</dt><dd>${t('latencyMs', { ms: attempt.latencyMs })}</dd>
<dt>${t('time')}</dt><dd>${dateTime(ctx.lang, attempt.startedAt)}</dd>
<dt>${t('error')}</dt><dd>${attempt.error ?? t('none')}</dd>
<dt>${t('response')}</dt><dd>${attempt.responseExcerpt === null || attempt.responseExcerpt === '' ? t('none') : html`<pre>${attempt.responseExcerpt}</pre>`}</dd>
${sent}</dl></div>`;
}

export function registerCallbackPages(router: ConsoleRouter, deps: ConsoleServices): void {
  router.get('/console/callbacks', async (ctx, request, reply) => {
    const t = translate(TEXTS, ctx.lang);
    const done = queryParam(request, 'done');
    const count = Number(queryParam(request, 'count'));
    const message =
      done === 'address-set'
        ? t('addressSet')
        : done === 'address-cleared'
          ? t('addressCleared')
          : done === 'retriggered' && Number.isInteger(count) && count >= 0
            ? t('bulkDone', { n: count })
            : undefined;
    const capped =
      done === 'retriggered' && queryParam(request, 'capped') === '1'
        ? html`<p class="warning" role="status">${t('bulkCapped', { cap: RETRIGGER_CAP })}</p>`
        : html``;
    const why = done === 'retriggered' && count === 0 ? bulkNothingReason(t, request) : undefined;
    return callbacksPage(ctx, deps, request, reply, {
      done:
        why === undefined
          ? html`${notice(message)}${capped}`
          : html`<p class="warning" role="status" id="retrigger-none">${why}</p>`,
    });
  });

  router.post('/console/callbacks/address', async (ctx, request, reply) => {
    const t = translate(TEXTS, ctx.lang);
    const raw = formOf(request).get('url') ?? '';
    const url = raw.trim();
    if (url !== '' && !isCallbackUrl(url)) {
      return callbacksPage(ctx, deps, request, reply, {
        status: 400,
        errors: [{ field: 'url', message: t('addressBad') }],
        addressValue: raw.slice(0, 4096),
      });
    }
    await deps.merchants.setCallbackUrl(ctx.merchantId, url === '' ? null : url);
    return seeOther(reply, `/console/callbacks?done=${url === '' ? 'address-cleared' : 'address-set'}#address`);
  });

  router.post('/console/callbacks/test', async (ctx, request, reply) => {
    const t = translate(TEXTS, ctx.lang);
    const raw = formOf(request).get('test-url') ?? '';
    const url = raw.trim();
    if (url !== '' && !isCallbackUrl(url)) {
      return callbacksPage(ctx, deps, request, reply, {
        status: 400,
        errors: [{ field: 'test-url', message: t('testUrlBad') }],
        testUrlValue: raw.slice(0, 4096),
      });
    }
    try {
      const { event, attempt } = await deps.callbacks.dispatcher.createAndDeliver((tx) =>
        deps.callbacks.tests.create(tx, ctx.merchantId, { url: url === '' ? null : url }),
      );
      const result = testResultHtml(
        t,
        ctx,
        toEventView(event),
        attempt === undefined ? undefined : toAttemptView(attempt, event),
      );
      return await callbacksPage(ctx, deps, request, reply, { testResult: result, testUrlValue: url });
    } catch (error) {
      if (!(error instanceof OperatorError) || error.failure.kind !== 'no_signing_key') throw error;
      const result = html`<div class="warning" role="alert" id="test-result"><p>${t('noKey')} <a href="/console/keys">${t('keysLink')}</a></p></div>`;
      return callbacksPage(ctx, deps, request, reply, { status: 409, testResult: result, testUrlValue: url });
    }
  });

  router.post('/console/callbacks/retrigger-failed', async (ctx, request, reply) => {
    const t = translate(TEXTS, ctx.lang);
    const form = formOf(request);
    const from = (form.get('retrigger-from') ?? '').trim().slice(0, 10);
    const to = (form.get('retrigger-to') ?? '').trim().slice(0, 10);
    const external = (form.get('retrigger-external') ?? '').trim().slice(0, 64);
    const event = (form.get('retrigger-event') ?? '').slice(0, 16);
    const { range, errors } = dayRange(ctx.lang, {
      from,
      to,
      required: true,
      fromField: 'retrigger-from',
      toField: 'retrigger-to',
    });
    if (event !== '' && !isEventName(event)) errors.push({ field: 'retrigger-event', message: t('eventBad') });
    if (range?.from === undefined || range.until === undefined || errors.length > 0) {
      return callbacksPage(ctx, deps, request, reply, {
        status: 400,
        errors,
        bulkFrom: from,
        bulkTo: to,
        bulkExternal: external,
        bulkEvent: event,
      });
    }
    const window = { from: range.from, to: range.until };
    const byExternal = { orderIds: await externalScope(deps, ctx.merchantId, external) };
    const filter = { ...byExternal, orderKinds: isEventName(event) ? EVENTS[event].kinds : undefined };
    const orderIds = await deps.store.transact(async (tx) => {
      const ids = await q.ordersWithFailedEvents(tx, ctx.merchantId, window, RETRIGGER_CAP + 1, filter);
      const chosen = ids.slice(0, RETRIGGER_CAP);
      for (const orderId of chosen) await deps.callbacks.outbox.retrigger(tx, orderId);
      return { count: chosen.length, capped: ids.length > RETRIGGER_CAP };
    });
    deps.callbacks.dispatcher.wake();
    if (orderIds.count === 0) {
      // Say which filter matched no failed callback: the days, the external order ID, the event, or
      // none (everything that failed has been delivered or is under way since).
      const read = deps.store.read;
      const why =
        (await q.countFailedEvents(read, ctx.merchantId, window)) === 0
          ? 'days'
          : external !== '' && (await q.countFailedEvents(read, ctx.merchantId, window, byExternal)) === 0
            ? 'external'
            : event !== '' && (await q.countFailedEvents(read, ctx.merchantId, window, filter)) === 0
              ? 'event'
              : 'resent';
      const params = new URLSearchParams({ done: 'retriggered', count: '0', why, rf: from, rt: to });
      if (external !== '') params.set('rx', external);
      if (event !== '') params.set('re', event);
      if (why === 'resent') params.set('n', String(await q.countFailedEvents(read, ctx.merchantId, window, filter)));
      return seeOther(reply, `/console/callbacks?${params.toString()}`);
    }
    return seeOther(
      reply,
      `/console/callbacks?done=retriggered&count=${orderIds.count}${orderIds.capped ? '&capped=1' : ''}#log`,
    );
  });

  router.post('/console/orders/:orderId/callbacks', async (ctx, request, reply) => {
    const orderId = (request.params as { orderId?: string }).orderId ?? '';
    if ((await merchantOrder(deps.store.read, ctx.merchantId, orderId)) === undefined) return ctx.notFound(reply);
    await deps.callbacks.dispatcher.createAndDeliver((tx) => deps.callbacks.outbox.retrigger(tx, orderId));
    return seeOther(reply, `/console/orders/${encodeURIComponent(orderId)}?done=retriggered#callbacks`);
  });
}

/**
 * The callback panel of an order's detail page: its callback events and attempts, and the form that
 * re-triggers its callback (with the spec's warning when the order is not final yet).
 */
export async function orderCallbacksPanel(
  ctx: ConsoleContext,
  deps: ConsoleServices,
  order: { orderId: string; final: boolean },
): Promise<Html> {
  const t = translate(TEXTS, ctx.lang);
  const history = await deps.callbacks.outbox.history(order.orderId);
  const events = history.events;
  const attempts = [...history.attempts].reverse();
  const eventTable =
    events.length === 0
      ? html`<p>${t('noEvents')}</p>`
      : html`<h3>${t('events')}</h3><div class="table" tabindex="0"><table><thead><tr><th>${t('created')}</th><th>${t('notifyId')}</th><th>${t('trigger')}</th><th>${t('state')}</th><th>${t('target')}</th><th class="num">${t(
          'attemptsCount',
        )}</th></tr></thead><tbody>${[...events]
          .reverse()
          .map(
            (e) =>
              html`<tr><td>${dateTime(ctx.lang, e.createdAt)}</td><td><code>${e.notifyId}</code></td><td>${t(e.trigger)}</td><td>${outcomeBadge(t, e.state)}</td><td>${
                e.targetUrl === null ? t('none') : html`<code>${e.targetUrl}</code>`
              }</td><td class="num">${e.attempts}</td></tr>`,
          )}</tbody></table></div>`;
  const attemptTable =
    events.length === 0
      ? html``
      : attempts.length === 0
        ? html`<p class="muted">${t('noOrderAttempts')}</p>`
        : html`<h3>${t('attempts')}</h3><div class="table" tabindex="0"><table><thead><tr><th>${t('time')}</th><th>${t('trigger')}</th><th class="num">${t('attemptNo')}</th><th>${t('url')}</th><th class="num">${t(
            'status',
          )}</th><th class="num">${t('latencyCol')}</th><th>${t('outcome')}</th><th>${t('response')}</th></tr></thead><tbody>${attempts.map(
            (a) =>
              html`<tr><td>${dateTime(ctx.lang, a.startedAt)}</td><td>${t(a.trigger)}</td><td class="num">${a.attemptNo}</td><td><code>${a.url}</code></td><td class="num">${
                a.httpStatus ?? t('none')
              }</td><td class="num">${a.latencyMs}</td><td>${outcomeBadge(t, a.outcome)}${nextRetry(
                t,
                ctx.lang,
                a,
                events.find((e) => e.eventId === a.eventId),
              )}${a.error !== null ? html`<br><span class="muted">${a.error}</span>` : ''}</td><td>${excerptCell(
                t,
                a.responseExcerpt,
              )}</td></tr>`,
          )}</tbody></table></div>`;
  const action = `/console/orders/${encodeURIComponent(order.orderId)}/callbacks`;
  const form = order.final
    ? html`<form method="post" action="${action}">${ctx.csrf}<button type="submit">${t('retrigger')}</button></form>`
    : html`<p class="warning" role="note">${t('notFinalWarning')}</p><form method="post" action="${action}" data-confirm="${t('notFinalConfirm')}">${ctx.csrf}<button type="submit" class="secondary">${t(
        'retrigger',
      )}</button></form>`;
  return html`<section class="panel" id="callbacks"><h2>${t('orderTitle')}</h2>${eventTable}${attemptTable}<p class="muted">${t('retriggerLead')}</p>${form}</section>`;
}
