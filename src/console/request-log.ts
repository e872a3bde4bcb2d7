/**
 * The request log of debug-mode keys: each merchant API request made with such a key, whatever its
 * outcome, with the code, msgEn and the string the server built to check the sign. Merchants read
 * it in the console; debug-mode errors carry its address. Kept for a week.
 */
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import * as q from './queries.js';

export const REQUEST_LOG_RETENTION_MS = 7 * 86_400_000;
const PATH_MAX = 300;
const MESSAGE_MAX = 2000;
const SIGNED_MAX = 70_000;

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

  async record(entry: Omit<q.RequestLogRow, 'created_at'>): Promise<void> {
    await this.store.transact((tx) =>
      q.insertRequestLogEntry(tx, {
        ...entry,
        path: entry.path.slice(0, PATH_MAX),
        msg_en: entry.msg_en.slice(0, MESSAGE_MAX),
        signed_string: entry.signed_string === null ? null : entry.signed_string.slice(0, SIGNED_MAX),
        created_at: this.clock.now(),
      }),
    );
  }

  list(merchantId: string, filter: q.RequestLogFilter): Promise<q.RequestLogRow[]> {
    return q.requestLogEntries(this.store.read, merchantId, filter);
  }

  /** One entry of the merchant's; undefined when unknown or another merchant's. */
  find(merchantId: string, requestId: string): Promise<q.RequestLogRow | undefined> {
    return q.findRequestLogEntry(this.store.read, merchantId, requestId);
  }

  async prune(): Promise<number> {
    return this.store.transact((tx) => q.deleteRequestLogBefore(tx, this.clock.now() - REQUEST_LOG_RETENTION_MS));
  }
}
