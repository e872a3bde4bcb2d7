import type { Clock } from '../clock.js';
import { newId } from '../store/ids.js';
import type { Store, Tx } from '../store/store.js';
import * as q from './queries.js';
import { OperatorError } from '../admin/failures.js';
import type { CallbackOutbox } from './service.js';
import type { CallbackOrderSource, OrderCallback } from './sources.js';

export const TEST_CALLBACK_KIND = 'test';

function testCallback(row: q.CallbackTestRow): OrderCallback {
  return {
    orderId: row.id,
    orderKind: TEST_CALLBACK_KIND,
    merchantId: row.merchant_id,
    accessKey: row.access_key,
    notifyUrl: row.notify_url,
    // Clearly a test: no amounts or statuses a merchant's system could mistake for a real payment.
    payload: {
      notifyType: 'test',
      orderId: row.id,
      merchantId: row.merchant_id,
      orderTime: row.created_at,
      message: 'Cashgate test callback: verify its sign and answer HTTP 200',
    },
  };
}

/** Signed test callbacks, sent through the same outbox, retries and log as order callbacks. */
export class TestCallbacks implements CallbackOrderSource {
  readonly kind = TEST_CALLBACK_KIND;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly outbox: CallbackOutbox,
  ) {}

  async currentCallback(
    db: Parameters<CallbackOrderSource['currentCallback']>[0],
    orderId: string,
  ): Promise<OrderCallback | undefined> {
    const row = await q.findTest(db, orderId);
    return row === undefined ? undefined : testCallback(row);
  }

  /**
   * Queues a test callback to `url`, else the merchant's unified address. It is signed with
   * `accessKey` (one of the merchant's keys that is not deleted), else the key an order callback
   * would carry: its newest active key whose activation delay is over.
   */
  send(merchantId: string, input: { url?: string | null | undefined; accessKey?: string | undefined }) {
    return this.store.transact((tx) => this.create(tx, merchantId, input));
  }

  /**
   * Writes a test callback and enqueues its event in the caller's transaction (the one code path
   * of `send` and of the console's send-now, which passes it to the dispatcher's createAndDeliver).
   */
  async create(
    tx: Tx,
    merchantId: string,
    input: { url?: string | null | undefined; accessKey?: string | undefined },
  ): Promise<q.CallbackEventRow> {
    const chosen = input.accessKey;
    const key = await q.testSigningKey(tx, merchantId, chosen, this.clock.now());
    if (key === undefined && chosen !== undefined)
      throw new OperatorError({ kind: 'api_key_not_found', accessKey: chosen });
    if (key === undefined) throw new OperatorError({ kind: 'no_signing_key', merchantId });
    const row: q.CallbackTestRow = {
      id: newId('cbt'),
      merchant_id: merchantId,
      access_key: key.access_key,
      notify_url: input.url ?? null,
      created_at: this.clock.now(),
    };
    await q.insertTest(tx, row);
    return this.outbox.enqueue(tx, testCallback(row));
  }
}
