import { OperatorError } from '../admin/failures.js';
import type { Clock } from '../clock.js';
import { newId } from '../store/ids.js';
import type { Store, Tx, ReadDb } from '../store/store.js';
import * as q from './queries.js';
import type { CallbackOrderSource, OrderCallback } from './sources.js';

export interface CallbackAttemptView {
  attemptId: string;
  eventId: string;
  notifyId: string;
  trigger: 'automatic' | 'manual';
  attemptNo: number;
  url: string;
  startedAt: number;
  latencyMs: number;
  httpStatus: number | null;
  outcome: q.CallbackAttemptRow['outcome'];
  error: string | null;
  responseExcerpt: string | null;
}

export interface CallbackEventView {
  eventId: string;
  notifyId: string;
  orderId: string;
  orderKind: string;
  trigger: 'automatic' | 'manual';
  state: q.CallbackEventRow['state'];
  targetUrl: string | null;
  accessKey: string;
  payload: unknown;
  attempts: number;
  nextAttemptAt: number | null;
  createdAt: number;
}

export interface CallbackHistory {
  orderId: string;
  events: CallbackEventView[];
  /** Every attempt of every event, newest last. */
  attempts: CallbackAttemptView[];
}

/** host[:port] of a callback address ('' when it does not parse: the sender refuses it). */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** The address as logs and views show it: a password in it is never shown. */
export function redactUrl(url: string | null): string | null {
  if (url === null) return null;
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.href;
  } catch {
    return url;
  }
}

export function toEventView(row: q.CallbackEventRow): CallbackEventView {
  return {
    eventId: row.id,
    notifyId: row.notify_id,
    orderId: row.order_id,
    orderKind: row.order_kind,
    trigger: row.trigger,
    state: row.state,
    targetUrl: redactUrl(row.target_url),
    accessKey: row.access_key,
    payload: JSON.parse(row.payload) as unknown,
    attempts: row.attempts,
    nextAttemptAt: row.state === 'pending' ? row.next_attempt_at : null,
    createdAt: row.created_at,
  };
}

export function toAttemptView(row: q.CallbackAttemptRow, event: q.CallbackEventRow): CallbackAttemptView {
  return {
    attemptId: row.id,
    eventId: row.event_id,
    notifyId: event.notify_id,
    trigger: event.trigger,
    attemptNo: row.attempt_no,
    url: redactUrl(row.url) ?? '',
    startedAt: row.started_at,
    latencyMs: row.latency_ms,
    httpStatus: row.http_status,
    outcome: row.outcome,
    error: row.error,
    responseExcerpt: row.response_excerpt,
  };
}

/**
 * The transactional outbox of order-result callbacks. Domain modules call `enqueue` inside the
 * transaction of the state change; the dispatcher delivers after commit.
 */
export class CallbackOutbox {
  readonly #sources = new Map<string, CallbackOrderSource>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** Called after an enqueueing transaction commits, so delivery starts without waiting for a poll. */
    private readonly onCommitted: () => void,
  ) {}

  register(source: CallbackOrderSource): void {
    if (this.#sources.has(source.kind)) throw new Error(`callback source ${source.kind} is registered twice`);
    this.#sources.set(source.kind, source);
  }

  /**
   * Writes the callback of a state change in the caller's transaction. The target is resolved now:
   * the order's notifyUrl, else the merchant's unified address, else none (recorded as no_target).
   */
  async enqueue(
    tx: Tx,
    callback: OrderCallback,
    options: { trigger?: 'automatic' | 'manual'; notifyId?: string } = {},
  ): Promise<q.CallbackEventRow> {
    const callbackUrl = await q.merchantCallbackUrl(tx, callback.merchantId);
    const target = callback.notifyUrl ?? callbackUrl;
    const now = this.clock.now();
    const row: q.CallbackEventRow = {
      id: newId('cbe'),
      notify_id: options.notifyId ?? newId('ntf'),
      order_id: callback.orderId,
      order_kind: callback.orderKind,
      merchant_id: callback.merchantId,
      access_key: callback.accessKey,
      trigger: options.trigger ?? 'automatic',
      payload: JSON.stringify(callback.payload),
      target_url: target,
      target_host: target === null ? null : hostOf(target),
      state: target === null ? 'no_target' : 'pending',
      attempts: 0,
      next_attempt_at: target === null ? null : now,
      first_attempt_at: null,
      lease_token: null,
      lease_owner: null,
      created_at: now,
      updated_at: now,
    };
    await q.insertEvent(tx, row);
    if (target !== null) this.store.afterCommit(tx, this.onCommitted);
    return row;
  }

  /** The order's callback as it is now, from whichever source knows the order. */
  async currentCallback(db: ReadDb, orderId: string): Promise<OrderCallback> {
    for (const source of this.#sources.values()) {
      const callback = await source.currentCallback(db, orderId);
      if (callback !== undefined) return callback;
    }
    throw new OperatorError({ kind: 'order_not_found', orderId });
  }

  /**
   * A manual re-trigger: the payload rebuilt from the order's current state, the target resolved
   * again, and the notify_id of the order's latest event, so merchants can drop duplicates.
   */
  async retrigger(tx: Tx, orderId: string): Promise<q.CallbackEventRow> {
    const callback = await this.currentCallback(tx, orderId);
    const latest = (await q.eventsOfOrder(tx, orderId)).at(-1);
    return this.enqueue(tx, callback, {
      trigger: 'manual',
      ...(latest !== undefined && { notifyId: latest.notify_id }),
    });
  }

  /** Every event of the order and every attempt, newest last. */
  async history(orderId: string): Promise<CallbackHistory> {
    const events = await q.eventsOfOrder(this.store.read, orderId);
    if (events.length === 0) await this.currentCallback(this.store.read, orderId);
    const byId = new Map(events.map((e) => [e.id, e]));
    const attempts = await q.attemptsOfEvents(this.store.read, [...byId.keys()]);
    return {
      orderId,
      events: events.map(toEventView),
      attempts: attempts.flatMap((a) => {
        const event = byId.get(a.event_id);
        return event === undefined ? [] : [toAttemptView(a, event)];
      }),
    };
  }
}
