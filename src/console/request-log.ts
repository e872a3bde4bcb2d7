/**
 * The request log of debug-mode keys: each merchant API request made with such a key, whatever its
 * outcome, with the code, msgEn and the string the server built to check the sign. Merchants read
 * it in the console; debug-mode errors carry its address. Kept for a week.
 */
import type { Selectable } from 'kysely';
import type { Clock } from '../clock.js';
import type { RequestLogTable } from '../store/schema.js';
import type { Store } from '../store/store.js';

export type RequestLogRow = Selectable<RequestLogTable>;

export const REQUEST_LOG_RETENTION_MS = 7 * 86_400_000;
const PATH_MAX = 300;
const MESSAGE_MAX = 2000;
const SIGNED_MAX = 70_000;

export interface RequestLogFilter {
  accessKey?: string | undefined;
  /** Only failures (any code but 200). */
  failedOnly?: boolean | undefined;
  /** Newest first, after this entry (paging: its time and request id). */
  before?: { at: number; requestId: string } | undefined;
  limit: number;
}

/** Entries per key and minute (per node) for requests whose signature did not verify. */
export const UNVERIFIED_PER_KEY_PER_MINUTE = 60;

export class RequestLog {
  /** Per access key: the minute counted and how many unverified entries it has had. */
  readonly #unverified = new Map<string, { minute: number; count: number }>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly publicBaseUrl: string,
  ) {}

  /**
   * Whether a request whose signature did not verify may be recorded: anyone who knows an access
   * key can send those, so each key gets at most UNVERIFIED_PER_KEY_PER_MINUTE of them a minute.
   */
  admitUnverified(accessKey: string, now: number): boolean {
    const minute = Math.floor(now / 60_000);
    const seen = this.#unverified.get(accessKey);
    if (seen === undefined || seen.minute !== minute) {
      if (this.#unverified.size > 10_000) this.#unverified.clear();
      this.#unverified.set(accessKey, { minute, count: 1 });
      return true;
    }
    seen.count += 1;
    return seen.count <= UNVERIFIED_PER_KEY_PER_MINUTE;
  }

  /** The address of one request's entry in the console, carried by debug-mode errors. */
  viewUrl(requestId: string): string {
    return `${this.publicBaseUrl}/console/requests/${encodeURIComponent(requestId)}`;
  }

  async record(entry: Omit<RequestLogRow, 'created_at'>): Promise<void> {
    await this.store.transact((tx) =>
      tx
        .insertInto('request_log')
        .values({
          ...entry,
          path: entry.path.slice(0, PATH_MAX),
          msg_en: entry.msg_en.slice(0, MESSAGE_MAX),
          signed_string: entry.signed_string === null ? null : entry.signed_string.slice(0, SIGNED_MAX),
          created_at: this.clock.now(),
        })
        .execute(),
    );
  }

  list(merchantId: string, filter: RequestLogFilter): Promise<RequestLogRow[]> {
    return this.store.read
      .selectFrom('request_log')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .$if(filter.accessKey !== undefined, (q) => q.where('access_key', '=', filter.accessKey ?? ''))
      .$if(filter.failedOnly === true, (q) => q.where('code', '!=', '200'))
      .$if(filter.before !== undefined, (q) => {
        const { at, requestId } = filter.before ?? { at: 0, requestId: '' };
        return q.where((eb) =>
          eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('request_id', '<', requestId)])]),
        );
      })
      .orderBy('created_at', 'desc')
      .orderBy('request_id', 'desc')
      .limit(filter.limit)
      .execute();
  }

  /** One entry of the merchant's; undefined when unknown or another merchant's. */
  find(merchantId: string, requestId: string): Promise<RequestLogRow | undefined> {
    return this.store.read
      .selectFrom('request_log')
      .selectAll()
      .where('request_id', '=', requestId)
      .where('merchant_id', '=', merchantId)
      .executeTakeFirst();
  }

  async prune(): Promise<number> {
    const result = await this.store.transact((tx) =>
      tx
        .deleteFrom('request_log')
        .where('created_at', '<', this.clock.now() - REQUEST_LOG_RETENTION_MS)
        .executeTakeFirst(),
    );
    return Number(result.numDeletedRows);
  }
}
