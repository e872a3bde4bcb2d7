import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import { leasesFreedCounter, type LeaseKind } from '../nodes/leases.js';
import { COLLECTION_STATUS, TRANSFER_STATUS } from '../orders/state-machine.js';
import { EventNotAllowedError, type OrderService } from '../orders/service.js';
import { DarajaError, str, type DarajaClient, type DarajaExchange } from '../rails/daraja/client.js';
import { RailOutcomeUnknown, RailRefusal, type Rail, type RailOrder, type RailStarted } from '../rails/rails.js';
import { newId } from '../store/ids.js';
import type { Store, Tx } from '../store/store.js';
import { kenyaDetails, type KenyaDetails } from './kinds.js';
import { isKenyanMobile, maskKenyanMobile } from './phone.js';
import * as railq from '../rails/queries.js';
import * as q from './queries.js';

/** STK result codes after which the order stays payable: the payer may be prompted again. */
const STK_RETRYABLE: Record<string, string> = {
  '1': 'insufficient funds',
  '1032': 'cancelled by the payer',
  '1037': 'the phone could not be reached',
  '2001': 'wrong M-Pesa PIN',
};
/** The prompt lapsed unanswered: the order expires, as at the cashier's end. */
const STK_EXPIRED = '1019';
/** Daraja's answer to a query for a prompt the payer has not answered yet. */
const STK_PENDING_MESSAGE = /being processed/i;

/** What an STK callback reported, kept until the query confirms it. */
interface StkReport {
  resultCode: string;
  resultDesc: string;
  amount?: string;
  receipt?: string;
  phone?: string;
}

export interface DarajaKenyaOptions {
  /** `${PUBLIC_BASE_URL}/rails/daraja/<token>`: where Daraja calls back. */
  callbackBase: string;
  /** After this long with no callback, an STK prompt is asked about (STK Push Query). */
  stkQueryAfterMs: number;
  /** After this long with no result, a B2C payout is asked about (Transaction Status). */
  resultTimeoutMs: number;
}

const obj = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** Key/Value or Name/Value items (Daraja's two spellings) as a map of text. */
function items(list: unknown, name: 'Key' | 'Name'): Map<string, string> {
  const map = new Map<string, string>();
  for (const item of Array.isArray(list) ? list : [list]) {
    const entry = obj(item);
    const key = str(entry[name]);
    const value = str(entry.Value);
    if (key !== undefined && value !== undefined) map.set(key, value);
  }
  return map;
}

/** Phone numbers masked, credentials and the callback token removed: what the operator may see. */
export function redact(value: unknown, token: string): unknown {
  if (Array.isArray(value)) return value.map((v) => redact(v, token));
  if (typeof value === 'string') {
    const masked = value.replace(/\b254[17]\d{8}\b/g, (phone) => maskKenyanMobile(phone));
    return token === '' ? masked : masked.split(token).join('…');
  }
  if (typeof value === 'number' && isKenyanMobile(String(value))) return maskKenyanMobile(String(value));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === 'Password' || key === 'SecurityCredential' || key === 'access_token' ? '[redacted]' : redact(v, token),
    ]),
  );
}

/** Whole shillings as Daraja takes them: a plain number. */
const shillings = (amount: bigint) => Number(amount);

/** Printable ASCII only, at most `max` characters from the end (Daraja shows them on the payer's phone). */
const promptText = (text: string, max: number) =>
  text
    .replace(/[^\x20-\x7e]/g, '')
    .trim()
    .slice(-max);

/** A new request row: what is known when it is written, the rest empty. */
function requestRow(
  row: Pick<
    q.DarajaRequestRow,
    'id' | 'order_id' | 'api' | 'hand_over_id' | 'state' | 'ref' | 'conversation_id' | 'phone' | 'amount'
  >,
  now: number,
): q.DarajaRequestRow {
  return {
    ...row,
    result_code: null,
    result_desc: null,
    reported: null,
    checks: 0,
    deadline_at: null,
    lease_owner: null,
    created_at: now,
    updated_at: now,
  };
}

/** How long a reconciliation query holds its request before another node may ask again. */
const CLAIM_MS = 60_000;
const LEASE_KIND = 'daraja_reconcile';

/**
 * Kenya on Safaricom's Daraja: STK Push collections and B2C payouts as rails, their callbacks
 * confirmed by Daraja's own queries before an order changes, and the reconciliation that asks
 * about every request whose answer is late. See docs/going-live-kenya.md.
 */
export class DarajaKenya {
  readonly #callbacks: Counter<'kind' | 'disposition'> | undefined;
  readonly #freed: Counter<'kind' | 'reason'> | undefined;
  readonly #token: string;

  /** The reconciliation's claims on requests, freed when the node asking dies or stops. */
  readonly leases: LeaseKind = {
    kind: LEASE_KIND,
    free: (tx, owners, now) => q.freeDarajaClaims(tx, owners, now),
    held: (db, now) => q.darajaClaims(db, now),
  };

  constructor(
    private readonly deps: {
      client: DarajaClient;
      store: Store;
      orders: OrderService;
      clock: Clock;
      logger: Logger;
      /** This node: the reconciliation claims requests in its current id. */
      node: { readonly id: string };
      registry?: Registry;
    },
    private readonly options: DarajaKenyaOptions,
  ) {
    this.#token = options.callbackBase.split('/').pop() ?? '';
    this.#freed = deps.registry === undefined ? undefined : leasesFreedCounter(deps.registry);
    this.#callbacks =
      deps.registry === undefined
        ? undefined
        : new Counter({
            name: 'cashgate_daraja_callbacks_total',
            help: 'Callbacks from Daraja by kind and what became of them (matched, unmatched, refused)',
            labelNames: ['kind', 'disposition'],
            registers: [deps.registry],
          });
  }

  /** The rails Kenya orders are handed to. */
  rails(): { mpesaStk: Rail; mpesaB2c: Rail } {
    return {
      mpesaStk: { name: 'mpesa-stk (daraja)', start: (order) => this.#startStk(order) },
      mpesaB2c: { name: 'mpesa-b2c (daraja)', start: (order) => this.#startB2c(order), startsAfterAnswer: true },
    };
  }

  async close(): Promise<void> {
    await this.deps.client.close();
  }

  // ---- records ---------------------------------------------------------------------------------

  #message(
    exchange: Pick<DarajaExchange, 'httpStatus' | 'code' | 'durationMs'> & {
      /** A Daraja endpoint, or the callback it came as (`stk-callback`, `b2c-result`, …). */
      endpoint: string;
      request: unknown;
      response: unknown;
    },
    orderId: string | null,
    ref: string | null,
    direction: 'out' | 'in' = 'out',
    disposition: railq.RailMessageRow['disposition'] = null,
  ): railq.RailMessageRow {
    return {
      id: newId('rlm'),
      order_id: orderId,
      rail: 'daraja',
      direction,
      endpoint: exchange.endpoint,
      ref,
      http_status: exchange.httpStatus,
      code: exchange.code,
      request: exchange.request === null ? null : JSON.stringify(redact(exchange.request, this.#token)),
      response: exchange.response === null ? null : JSON.stringify(redact(exchange.response, this.#token)),
      duration_ms: direction === 'out' ? exchange.durationMs : null,
      disposition,
      at: this.deps.clock.now(),
    };
  }

  #inbound(endpoint: string, body: unknown, code: string | undefined, orderId: string | null, ref: string | null) {
    return this.#message(
      {
        endpoint,
        httpStatus: null,
        code: code ?? '',
        durationMs: 0,
        request: null,
        response: body,
      },
      orderId,
      ref,
      'in',
      orderId === null ? 'unmatched' : 'matched',
    );
  }

  async #write(work: (tx: Tx) => Promise<void>): Promise<void> {
    await this.deps.store.transact(work);
  }

  // ---- STK Push (collections) --------------------------------------------------------------------

  async #startStk(order: RailOrder): Promise<RailStarted> {
    const { store, client, clock } = this.deps;
    const details = JSON.parse(order.details) as KenyaDetails;
    const phone = details.checkingPhone ?? details.phone;
    if (order.earlierAttempts > 0) {
      // An earlier attempt may have prompted the payer: never prompt again blindly.
      const earlier = await q.darajaRequestsOfHandOver(store.read, order.idempotencyKey);
      const taken = earlier.find((r) => r.ref !== null);
      if (taken?.ref != null) return { channelOrderId: taken.ref };
      if (earlier.some((r) => r.state === 'sending' || r.state === 'unknown')) {
        await this.#write(async (tx) => {
          for (const r of earlier.filter((row) => row.state === 'sending'))
            await q.updateDarajaRequest(tx, r.id, { state: 'unknown', updated_at: clock.now() });
        });
        throw new RailOutcomeUnknown(
          'an earlier STK prompt got no answer from Daraja and STK Push offers no way to ask for it: no new prompt ' +
            'is sent; its callback still counts, and the payer may ask for another',
        );
      }
    }
    const id = `${order.idempotencyKey}#${order.earlierAttempts + 1}`;
    const now = clock.now();
    // Written before the call: a crash during it leaves a trace that forbids a blind second prompt.
    await this.#write((tx) =>
      q.insertDarajaRequest(
        tx,
        requestRow(
          {
            id,
            order_id: order.orderId,
            api: 'stk',
            hand_over_id: order.idempotencyKey,
            state: 'sending',
            ref: null,
            conversation_id: null,
            phone,
            amount: shillings(order.amount),
          },
          now,
        ),
      ),
    );
    const { stk } = client.config;
    const body = {
      BusinessShortCode: stk.shortcode,
      ...client.stkCredentials(),
      TransactionType: stk.transactionType,
      Amount: shillings(order.amount),
      PartyA: phone,
      PartyB: stk.partyB,
      PhoneNumber: phone,
      CallBackURL: `${this.options.callbackBase}/stk`,
      AccountReference: promptText(order.externalOrderId, 12) || order.orderId.slice(-12),
      TransactionDesc: promptText(order.remark ?? '', 13) || 'Payment',
    };
    const exchange = await this.#callForStart('stk', body, order.orderId, id);
    const ref = str(obj(exchange.response).CheckoutRequestID) ?? '';
    return {
      channelOrderId: ref,
      record: async (tx) => {
        const row = await q.findDarajaRequest(tx, id);
        // A callback that came first may already have given the request its id.
        if (row?.ref === null || row?.ref === ref) {
          await q.updateDarajaRequest(tx, id, {
            state: row.state === 'settled' ? 'settled' : 'accepted',
            ref,
            deadline_at: row.state === 'settled' ? null : clock.now() + this.options.stkQueryAfterMs,
            updated_at: clock.now(),
          });
        }
        await railq.insertRailMessages(tx, [this.#message(exchange, order.orderId, ref)]);
      },
    };
  }

  /**
   * A call that starts an order. Its failure is recorded with the request's state: 'refused' when
   * Daraja did nothing (tried again later, or never when the order itself is refused), 'unknown'
   * when the answer was lost.
   */
  async #callForStart(
    endpoint: 'stk' | 'b2c',
    body: Record<string, unknown>,
    orderId: string,
    requestId: string,
  ): Promise<DarajaExchange> {
    try {
      const exchange = await this.deps.client.call(endpoint, body);
      if (str(obj(exchange.response).ResponseCode) !== '0') {
        throw new DarajaError(endpoint, 'refused', exchange.code, 'Daraja did not accept the request', exchange);
      }
      return exchange;
    } catch (error) {
      if (!(error instanceof DarajaError)) throw error;
      const now = this.deps.clock.now();
      await this.#write(async (tx) => {
        await q.updateDarajaRequest(tx, requestId, {
          state: error.outcomeUnknown ? 'unknown' : 'refused',
          result_code: error.code,
          result_desc: error.message.slice(0, 500),
          updated_at: now,
        });
        await railq.insertRailMessages(tx, [this.#message(error.exchange, orderId, null)]);
      });
      if (error.outcomeUnknown)
        throw new RailOutcomeUnknown(
          `${error.message}: Daraja may have the request; it is asked before anything is sent again`,
        );
      if (error.kind === 'invalid') throw new RailRefusal(error.message);
      throw error;
    }
  }

  /** An STK callback: accepted only for a prompt Cashgate sent, and only as far as STK Push Query confirms it. */
  async stkCallback(body: unknown): Promise<void> {
    const callback = obj(obj(obj(body).Body).stkCallback);
    const ref = str(callback.CheckoutRequestID);
    const resultCode = str(callback.ResultCode);
    const meta = items(obj(callback.CallbackMetadata).Item, 'Name');
    const report: StkReport | undefined =
      resultCode === undefined
        ? undefined
        : {
            resultCode,
            resultDesc: str(callback.ResultDesc) ?? '',
            ...(meta.has('Amount') && { amount: meta.get('Amount') }),
            ...(meta.has('MpesaReceiptNumber') && { receipt: meta.get('MpesaReceiptNumber') }),
            ...(meta.has('PhoneNumber') && { phone: meta.get('PhoneNumber') }),
          };
    let request = ref === undefined ? undefined : await q.darajaRequestByRef(this.deps.store.read, 'stk', ref);
    if (request === undefined && ref !== undefined && report !== undefined) request = await this.#adopt(ref, report);
    if (request === undefined || report === undefined) {
      this.#callbacks?.inc({ kind: 'stk', disposition: 'unmatched' });
      this.deps.logger.warn(
        { checkoutRequestId: ref },
        'an STK callback names no prompt Cashgate sent; recorded, nothing changes',
      );
      await this.#write((tx) =>
        railq.insertRailMessages(tx, [this.#inbound('stk-callback', body, resultCode, null, ref ?? null)]),
      );
      return;
    }
    const reported = JSON.stringify(report);
    const message = this.#inbound('stk-callback', body, resultCode, request.order_id, ref ?? null);
    if (request.state === 'settled') {
      // A repeat of a callback whose outcome is already on the order.
      await this.#write(async (tx) => {
        await railq.insertRailMessages(tx, [message]);
        await q.refuseContradictedCallbacks(tx, ref ?? '', 'stk-callback', request.result_code ?? '');
      });
      return;
    }
    await this.#write(async (tx) => {
      await q.updateDarajaRequest(tx, request.id, { reported, updated_at: this.deps.clock.now() });
      await railq.insertRailMessages(tx, [message]);
    });
    this.#callbacks?.inc({ kind: 'stk', disposition: 'matched' });
    await this.#confirmStk({ ...request, reported });
  }

  /**
   * A callback for a CheckoutRequestID Cashgate never learned (the answer to its prompt was lost,
   * or the callback overtook it): it belongs to the one unanswered prompt to the same phone for the
   * same amount, if there is exactly one, sent no longer ago than a prompt lives.
   */
  async #adopt(ref: string, report: StkReport): Promise<q.DarajaRequestRow | undefined> {
    if (report.phone === undefined || report.amount === undefined) return undefined;
    const amount = Number(report.amount);
    if (!Number.isSafeInteger(amount)) return undefined;
    const since = this.deps.clock.now() - Math.max(this.options.stkQueryAfterMs, 300_000);
    const candidates = await q.unansweredStkRequests(this.deps.store.read, { phone: report.phone, amount, since });
    const [only] = candidates;
    if (candidates.length !== 1 || only === undefined) return undefined;
    const adopted = await this.deps.store.transact((tx) => q.adoptDarajaRef(tx, only.id, ref, this.deps.clock.now()));
    if (!adopted) return q.darajaRequestByRef(this.deps.store.read, 'stk', ref);
    this.deps.logger.info(
      { orderId: only.order_id, checkoutRequestId: ref },
      'an STK callback was matched to a prompt whose answer was lost',
    );
    return { ...only, ref, state: 'accepted' };
  }

  /** Asks STK Push Query what became of the prompt and moves the order as its answer says. */
  async #confirmStk(request: q.DarajaRequestRow): Promise<void> {
    const { client, clock, orders } = this.deps;
    const ref = request.ref ?? '';
    let exchange: DarajaExchange;
    try {
      exchange = await client.call('stk-query', {
        BusinessShortCode: client.config.stk.shortcode,
        ...client.stkCredentials(),
        CheckoutRequestID: ref,
      });
    } catch (error) {
      if (!(error instanceof DarajaError)) throw error;
      const pending = STK_PENDING_MESSAGE.test(error.message);
      // Not answered yet (or Daraja busy): asked again soon, sooner while a callback waits for it.
      const wait = pending ? 5_000 : Math.min(300_000, 5_000 * 2 ** Math.min(request.checks, 6));
      await this.#write(async (tx) => {
        await q.updateDarajaRequest(tx, request.id, {
          checks: request.checks + 1,
          deadline_at: clock.now() + wait,
          updated_at: clock.now(),
        });
        await railq.insertRailMessages(tx, [this.#message(error.exchange, request.order_id, ref)]);
      });
      return;
    }
    const answer = obj(exchange.response);
    const code = str(answer.ResultCode) ?? '';
    const desc = str(answer.ResultDesc) ?? '';
    const report = request.reported === null ? undefined : (JSON.parse(request.reported) as StkReport);
    const confirmed = report !== undefined && report.resultCode === code;
    const also = async (tx: Tx) => {
      await q.updateDarajaRequest(tx, request.id, {
        state: 'settled',
        result_code: code,
        result_desc: desc,
        checks: request.checks + 1,
        deadline_at: null,
        updated_at: clock.now(),
      });
      await railq.insertRailMessages(tx, [this.#message(exchange, request.order_id, ref)]);
      // A callback its query contradicts is marked so: it moved nothing.
      await q.refuseContradictedCallbacks(tx, ref, 'stk-callback', code);
    };
    if (report !== undefined && !confirmed) {
      this.#callbacks?.inc({ kind: 'stk', disposition: 'refused' });
      this.deps.logger.warn(
        { orderId: request.order_id, checkoutRequestId: ref, callback: report.resultCode, query: code },
        'an STK callback disagrees with STK Push Query; the query decides',
      );
    }
    const source = 'daraja:stk';
    try {
      if (code === '0') {
        // The amount the callback reported, when the query confirms the payment; else the prompt's.
        const amount =
          confirmed && report.amount !== undefined ? BigInt(Math.round(Number(report.amount))) : BigInt(request.amount);
        await orders.applyEvent(request.order_id, 'paid', {
          source,
          amount,
          data: {
            ...(confirmed && report.receipt !== undefined && { mpesaReceipt: report.receipt }),
            ...(confirmed && report.phone !== undefined && { mpesaPhone: report.phone }),
          },
          also,
        });
      } else if (code === STK_EXPIRED && !(await q.laterOpenStkRequest(this.deps.store.read, request))) {
        // The prompt lapsed unanswered; a lapse of an earlier prompt while the payer's next one is
        // still open only says why that one was not paid.
        await orders.applyEvent(request.order_id, 'expired', { source, also });
      } else {
        await orders.recordRailReport(request.order_id, {
          event: 'rail_declined',
          source,
          details: { mpesaLastResult: { code, desc: STK_RETRYABLE[code] ?? desc } },
          also,
        });
      }
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
      // The order moved on meanwhile (expired, or paid through another prompt): the answer is kept.
      // A payment that is not the one the order records was taken on top of it, or too late.
      const recorded = kenyaDetails(error.order).mpesaReceipt;
      const same =
        error.order.status === COLLECTION_STATUS.paid && recorded !== undefined && recorded === report?.receipt;
      if (code === '0' && !same) {
        this.deps.logger.error(
          { orderId: request.order_id, checkoutRequestId: ref, status: error.order.status, receipt: report?.receipt },
          'M-Pesa took a payment for an order that was already paid by another prompt, or no longer waits for one: refund it or settle it by hand',
        );
      }
      await this.#write(also);
    }
  }

  // ---- B2C (payouts) ----------------------------------------------------------------------------

  /** The OriginatorConversationID of an order's payout: the same on every attempt, so Daraja never pays twice. */
  static originatorId(orderId: string): string {
    return `${orderId}.b2c`;
  }

  async #startB2c(order: RailOrder): Promise<RailStarted> {
    const { store, client, clock } = this.deps;
    const details = JSON.parse(order.details) as KenyaDetails;
    const originator = DarajaKenya.originatorId(order.orderId);
    const existing = await q.findDarajaRequest(store.read, originator);
    if (existing?.conversation_id != null) return { channelOrderId: existing.conversation_id };
    const now = clock.now();
    if (existing === undefined) {
      await this.#write((tx) =>
        q.insertDarajaRequest(
          tx,
          requestRow(
            {
              id: originator,
              order_id: order.orderId,
              api: 'b2c',
              hand_over_id: order.idempotencyKey,
              state: 'sending',
              ref: originator,
              conversation_id: null,
              phone: details.phone,
              amount: shillings(order.amount),
            },
            now,
          ),
        ),
      );
    }
    const { b2c } = client.config;
    const remark = promptText(order.remark ?? '', 100);
    const body = {
      OriginatorConversationID: originator,
      InitiatorName: b2c.initiatorName,
      SecurityCredential: client.securityCredential(),
      CommandID: b2c.commandId,
      Amount: shillings(order.amount),
      PartyA: b2c.shortcode,
      PartyB: details.phone,
      // 2 to 100 characters: the order's remark, else what the payout is.
      Remarks: remark.length >= 2 ? remark : promptText(`Payout ${order.externalOrderId}`, 100),
      QueueTimeOutURL: `${this.options.callbackBase}/b2c/timeout`,
      ResultURL: `${this.options.callbackBase}/b2c/result`,
      Occassion: promptText(order.externalOrderId, 100) || order.orderId,
    };
    let exchange: DarajaExchange;
    try {
      exchange = await this.#callForStart('b2c', body, order.orderId, originator);
    } catch (error) {
      // Daraja already has this OriginatorConversationID: submitted before; its result (or the
      // status query the reconciliation makes) says what happened. Nothing is sent again.
      if (isDuplicate(error)) {
        await this.#write((tx) => q.updateDarajaRequest(tx, originator, this.#awaitResult('accepted')));
        await this.#markProcessing(order.orderId);
        return { channelOrderId: originator };
      }
      if (error instanceof RailOutcomeUnknown) {
        // Asked about by the reconciliation worker (Transaction Status) instead of sent again.
        await this.#write((tx) => q.updateDarajaRequest(tx, originator, this.#awaitResult('unknown')));
      }
      if (error instanceof RailRefusal) await this.#failPayout(order.orderId, error.message);
      throw error;
    }
    const conversation = str(obj(exchange.response).ConversationID) ?? originator;
    await this.#markProcessing(order.orderId);
    return {
      channelOrderId: conversation,
      record: async (tx) => {
        await q.updateDarajaRequest(tx, originator, {
          ...this.#awaitResult('accepted'),
          conversation_id: conversation,
        });
        await railq.insertRailMessages(tx, [this.#message(exchange, order.orderId, originator)]);
      },
    };
  }

  #awaitResult(state: 'accepted' | 'unknown') {
    const now = this.deps.clock.now();
    return { state, deadline_at: now + this.options.resultTimeoutMs, updated_at: now };
  }

  /** Daraja accepted the payout: the order is with the rail (2, BANK_PROCESSING). */
  async #markProcessing(orderId: string): Promise<void> {
    try {
      await this.deps.orders.applyEvent(orderId, 'processing', { source: 'daraja:b2c' });
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
    }
  }

  async #failPayout(orderId: string, reason: string, also?: (tx: Tx) => Promise<void>): Promise<void> {
    try {
      await this.deps.orders.applyEvent(orderId, 'failed', {
        source: 'daraja:b2c',
        data: { reason },
        ...(also !== undefined && { also }),
      });
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
      if (also !== undefined) await this.#write(also);
    }
  }

  /**
   * A B2C result. Its body is not trusted: it is recorded and the payout is asked about with
   * Transaction Status, whose result (to a URL only Daraja is given, for a query only Cashgate
   * made) settles the order.
   */
  async b2cResult(body: unknown, endpoint: 'b2c-result' | 'b2c-timeout'): Promise<void> {
    const result = obj(obj(body).Result);
    const originator = str(result.OriginatorConversationID);
    const request = originator === undefined ? undefined : await q.findDarajaRequest(this.deps.store.read, originator);
    const known = request?.api === 'b2c' ? request : undefined;
    const message = this.#inbound(endpoint, body, str(result.ResultCode), known?.order_id ?? null, originator ?? null);
    this.#callbacks?.inc({ kind: endpoint, disposition: known === undefined ? 'unmatched' : 'matched' });
    await this.#write((tx) => railq.insertRailMessages(tx, [message]));
    if (known === undefined) {
      this.deps.logger.warn(
        { originatorConversationId: originator },
        'a B2C result names no payout Cashgate made; recorded, nothing changes',
      );
      return;
    }
    if (known.state === 'settled') return;
    await this.#queryStatus(known);
  }

  /** Asks Transaction Status about a payout; its result comes to the status result URL. */
  async #queryStatus(payout: q.DarajaRequestRow): Promise<void> {
    const { client, clock, store } = this.deps;
    const { b2c } = client.config;
    const id = `${payout.order_id}.status.${payout.checks + 1}`;
    const body = {
      Initiator: b2c.initiatorName,
      SecurityCredential: client.securityCredential(),
      CommandID: 'TransactionStatusQuery',
      OriginalConversationID: payout.id,
      PartyA: b2c.shortcode,
      IdentifierType: '4',
      ResultURL: `${this.options.callbackBase}/status/result`,
      QueueTimeOutURL: `${this.options.callbackBase}/status/timeout`,
      Remarks: 'Payout status',
      Occasion: payout.order_id,
    };
    const now = clock.now();
    // The next look if this query's result never comes: backing off, at most every 30 minutes.
    const next =
      now + Math.min(1_800_000, Math.max(5_000, this.options.resultTimeoutMs) * 2 ** Math.min(payout.checks, 4));
    try {
      const exchange = await client.call('status', body);
      const conversation = str(obj(exchange.response).ConversationID) ?? id;
      await store.transact(async (tx) => {
        await q.updateDarajaRequest(tx, payout.id, { checks: payout.checks + 1, deadline_at: next, updated_at: now });
        await q.insertDarajaRequest(
          tx,
          requestRow(
            {
              id,
              order_id: payout.order_id,
              api: 'status',
              hand_over_id: null,
              state: 'accepted',
              ref: conversation,
              conversation_id: conversation,
              phone: null,
              amount: payout.amount,
            },
            now,
          ),
        );
        await railq.insertRailMessages(tx, [this.#message(exchange, payout.order_id, payout.id)]);
      });
    } catch (error) {
      if (!(error instanceof DarajaError)) throw error;
      await store.transact(async (tx) => {
        await q.updateDarajaRequest(tx, payout.id, { checks: payout.checks + 1, deadline_at: next, updated_at: now });
        await railq.insertRailMessages(tx, [this.#message(error.exchange, payout.order_id, payout.id)]);
      });
    }
  }

  /** A Transaction Status result: for a query Cashgate made, it says what became of the payout. */
  async statusResult(body: unknown, endpoint: 'status-result' | 'status-timeout'): Promise<void> {
    const { store, clock } = this.deps;
    const result = obj(obj(body).Result);
    const conversation = str(result.ConversationID);
    const query =
      conversation === undefined ? undefined : await q.darajaRequestByRef(store.read, 'status', conversation);
    const message = this.#inbound(
      endpoint,
      body,
      str(result.ResultCode),
      query?.order_id ?? null,
      conversation ?? null,
    );
    this.#callbacks?.inc({ kind: endpoint, disposition: query === undefined ? 'unmatched' : 'matched' });
    if (query === undefined)
      this.deps.logger.warn(
        { conversationId: conversation },
        'a Transaction Status result names no query Cashgate made; recorded, nothing changes',
      );
    const params = items(obj(result.ResultParameters).ResultParameter, 'Key');
    // The query Cashgate made names its order, and so the payout it asked about: what the result
    // echoes of the payout's own ids is not relied on.
    const payout =
      query === undefined || endpoint === 'status-timeout'
        ? undefined
        : await q.findDarajaRequest(store.read, DarajaKenya.originatorId(query.order_id));
    const record = async (tx: Tx) => {
      await railq.insertRailMessages(tx, [message]);
      if (query !== undefined)
        await q.updateDarajaRequest(tx, query.id, {
          state: 'settled',
          result_code: str(result.ResultCode) ?? null,
          result_desc: str(result.ResultDesc) ?? null,
          updated_at: clock.now(),
        });
    };
    const status = params.get('TransactionStatus');
    const settled = str(result.ResultCode) === '0' && (status === 'Completed' || status === 'Failed');
    if (payout === undefined || payout.state === 'settled' || !settled) {
      // Unknown, not yet final, or not found: the payout stays in processing and is asked about again.
      await this.#write(record);
      return;
    }
    const also = async (tx: Tx) => {
      await record(tx);
      await q.updateDarajaRequest(tx, payout.id, {
        state: 'settled',
        result_code: status === 'Completed' ? '0' : (str(result.ResultCode) ?? null),
        result_desc: status,
        deadline_at: null,
        updated_at: clock.now(),
      });
    };
    await this.#settlePayout(payout, status === 'Completed', params, also);
  }

  async #settlePayout(
    payout: q.DarajaRequestRow,
    completed: boolean,
    params: Map<string, string>,
    also: (tx: Tx) => Promise<void>,
  ): Promise<void> {
    const { orders } = this.deps;
    const source = 'daraja:b2c';
    await this.#markProcessing(payout.order_id);
    if (!completed) {
      // Transaction Status says Failed; the payout's own result (recorded) gives the reason when it came.
      const reason = (await this.#lastResultDesc(payout)) ?? 'M-Pesa reports the payout as failed';
      await this.#failPayout(payout.order_id, reason, also);
      return;
    }
    const receipt = params.get('ReceiptNo') ?? '';
    const name = (params.get('CreditPartyName') ?? '').replace(/^\s*\d+\s*-\s*/, '');
    try {
      await orders.applyEvent(payout.order_id, 'succeeded', {
        source,
        data: { mpesaReceipt: receipt, receiverName: name },
        also,
      });
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
      if (error.order.status !== TRANSFER_STATUS.succeeded) {
        this.deps.logger.error(
          { orderId: payout.order_id, status: error.order.status },
          'M-Pesa completed a payout whose order had already ended otherwise: check it by hand',
        );
      }
      await this.#write(also);
    }
  }

  /** The ResultDesc of the payout's own result callback, if one came. */
  async #lastResultDesc(payout: q.DarajaRequestRow): Promise<string | undefined> {
    const messages = await railq.railMessagesOfOrder(this.deps.store.read, payout.order_id);
    const result = messages.reverse().find((m) => m.endpoint === 'b2c-result' && m.code !== '0');
    if (result?.response == null) return undefined;
    return str(obj(obj(JSON.parse(result.response)).Result).ResultDesc);
  }

  // ---- reconciliation ---------------------------------------------------------------------------

  /**
   * An operator asks Daraja again about one order now: its requests still waiting for an answer are
   * made due and reconciled at once (the status query, never the request again). How many waited.
   */
  async askAgain(orderId: string): Promise<number> {
    const now = this.deps.clock.now();
    const waiting = await this.deps.store.transact((tx) => q.darajaRequestsDueNow(tx, orderId, now));
    if (waiting > 0) await this.reconcile();
    return waiting;
  }

  /**
   * Asks Daraja about every request whose answer is late: STK prompts with no (confirmed) callback,
   * payouts with no result. Each request is taken by one node (its next look moved forward first).
   */
  async reconcile(limit = 50): Promise<number> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const due = await q.dueDarajaRequests(store.read, now, limit);
    let asked = 0;
    for (const request of due) {
      const deadline = request.deadline_at ?? 0;
      const owner = this.deps.node.id;
      const taken = await store.transact((tx) =>
        q.claimDarajaRequest(tx, request.id, { deadline, owner, until: now + CLAIM_MS }),
      );
      if (!taken) continue;
      if (request.lease_owner !== null && request.lease_owner !== owner)
        this.#freed?.inc({ kind: LEASE_KIND, reason: 'expired' });
      asked += 1;
      if (request.api === 'stk') await this.#confirmStk(request);
      else if (request.api === 'b2c') await this.#queryStatus(request);
    }
    return asked;
  }

  /** What the operator sees of an order's rail traffic. */
}

/** Daraja's answer to a repeated OriginatorConversationID. */
function isDuplicate(error: unknown): boolean {
  return error instanceof DarajaError && /duplicate/i.test(error.message);
}
