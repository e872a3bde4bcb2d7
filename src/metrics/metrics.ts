import { Counter, type CounterConfiguration, type Metric, type Registry } from 'prom-client';

/**
 * Operator metrics shared by several modules, on the registry served at /metrics. Each node counts
 * its own work (scrape every node); the gauges read from the database show the whole installation.
 * Label values are bounded: route patterns (never raw URLs), enumerations, or a fixed `other`.
 */

/** The registry's counter of that name, made on first use (a second server on one registry shares it). */
export function counterOn<T extends string>(
  registry: Registry,
  config: Omit<CounterConfiguration<T>, 'registers'>,
): Counter<T> {
  const existing = registry.getSingleMetric(config.name);
  if (existing instanceof Counter) return existing;
  return new Counter({ ...config, registers: [registry] });
}

/** A label value from outside (a channel type, a method): kept when short and plain, else `other`. */
export function boundedLabel(value: string | null | undefined, allowed?: ReadonlySet<string>): string {
  if (value === null || value === undefined || value === '') return 'none';
  if (allowed !== undefined) return allowed.has(value) ? value : 'other';
  return /^[A-Za-z0-9_.-]{1,24}$/.test(value) ? value : 'other';
}

const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** One method and route pattern: its answers by status and its latency buckets (not cumulative). */
interface HttpSeries {
  method: string;
  route: string;
  statuses: Map<number, number>;
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * HTTP requests by route pattern, method and status, and their latency. A request costs a map
 * look-up and a few additions (prom-client's own `inc`/`observe` hash a label object each call,
 * several microseconds a request); the figures are handed to the registry when it is scraped.
 */
export class HttpMetrics {
  readonly #series = new Map<string, HttpSeries>();

  constructor(registry: Registry) {
    const series = this.#series;
    counterOn<'method' | 'route' | 'status'>(registry, {
      name: 'cashgate_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern (unmatched when no route served it) and HTTP status',
      labelNames: ['method', 'route', 'status'],
      collect() {
        this.reset();
        for (const { method, route, statuses } of series.values()) {
          for (const [status, count] of statuses) this.inc({ method, route, status: String(status) }, count);
        }
      },
    });
    registry.registerMetric(new LatencyHistogram(series) as unknown as Metric);
  }

  /** One answered request: `route` is the pattern that served it, undefined when none did. */
  observe(method: string, route: string | undefined, status: number, seconds: number): void {
    // Keyed by the labels themselves: two unknown methods share the one series "other".
    const label = boundedLabel(method, METHODS);
    const key = `${label} ${route ?? ''}`;
    let entry = this.#series.get(key);
    if (entry === undefined) {
      entry = {
        method: label,
        route: route ?? 'unmatched',
        statuses: new Map(),
        buckets: LATENCY_BUCKETS.map(() => 0),
        sum: 0,
        count: 0,
      };
      this.#series.set(key, entry);
    }
    entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1);
    const bucket = LATENCY_BUCKETS.findIndex((bound) => seconds <= bound);
    if (bucket >= 0) entry.buckets[bucket] = (entry.buckets[bucket] ?? 0) + 1;
    entry.sum += seconds;
    entry.count += 1;
  }
}

/** cashgate_http_request_duration_seconds, in the shape the registry asks of a histogram. */
class LatencyHistogram {
  readonly name = 'cashgate_http_request_duration_seconds';
  readonly help = 'Time from receiving a request to sending its answer, by method and route pattern';
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(readonly series: ReadonlyMap<string, HttpSeries>) {}

  get(): { name: string; help: string; type: string; aggregator: string; values: object[] } {
    const values: object[] = [];
    for (const { method, route, buckets, sum, count } of this.series.values()) {
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((le, n) => {
        cumulative += buckets[n] ?? 0;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { method, route, le },
          value: cumulative,
        });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { method, route, le: '+Inf' }, value: count });
      values.push({ metricName: `${this.name}_sum`, labels: { method, route }, value: sum });
      values.push({ metricName: `${this.name}_count`, labels: { method, route }, value: count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    // The figures belong to the HTTP hook; a registry reset leaves them (counters only grow).
  }
}

/** Merchant API requests refused by the authentication step, by API code and failure kind. */
export class AuthMetrics {
  readonly #refusals: Counter<'code' | 'reason'>;

  constructor(registry: Registry) {
    this.#refusals = counterOn(registry, {
      name: 'cashgate_auth_refusals_total',
      help: 'Merchant API requests refused by authentication, by code (307, 301, 429) and reason (the failure kind)',
      labelNames: ['code', 'reason'],
    });
  }

  refused(code: string, reason: string): void {
    this.#refusals.inc({ code, reason });
  }
}

/** The labels of an order in the order metrics. */
export interface OrderLabels {
  area: string;
  kind: string;
  channel: string | null;
}

/** Orders created and orders reaching each status; counted once their unit of work has committed. */
export class OrderMetrics {
  readonly #created: Counter<'area' | 'kind' | 'channel'>;
  readonly #reached: Counter<'area' | 'kind' | 'channel' | 'status'>;
  readonly #expired: Counter<'area' | 'kind'>;

  constructor(registry: Registry) {
    this.#created = counterOn(registry, {
      name: 'cashgate_orders_created_total',
      help: 'Orders created (a repeated create answered from the first is not counted), by area, kind and channel',
      labelNames: ['area', 'kind', 'channel'],
    });
    this.#reached = counterOn(registry, {
      name: 'cashgate_orders_status_reached_total',
      help: 'Order status changes, by area, kind, channel and the status reached (the API status number)',
      labelNames: ['area', 'kind', 'channel', 'status'],
    });
    this.#expired = counterOn(registry, {
      name: 'cashgate_orders_expired_total',
      help: 'Orders the expiry work expired because their time ran out, by area and kind',
      labelNames: ['area', 'kind'],
    });
  }

  created(order: OrderLabels): void {
    this.#created.inc(orderLabels(order));
  }

  reached(order: OrderLabels, status: number): void {
    this.#reached.inc({ ...orderLabels(order), status: String(status) });
  }

  expired(order: Pick<OrderLabels, 'area' | 'kind'>): void {
    this.#expired.inc({ area: order.area, kind: order.kind });
  }
}

function orderLabels(order: OrderLabels): Record<'area' | 'kind' | 'channel', string> {
  return { area: order.area, kind: order.kind, channel: boundedLabel(order.channel) };
}
