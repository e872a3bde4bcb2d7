/**
 * Today: what needs a person now, each a count with a link to where it is dealt with (unmatched
 * and late incoming payments, failed or late returns, payouts waiting on their rail past its
 * deadline, hand-overs retrying, callbacks failing by merchant, token sends stuck, approvals
 * waiting), the health of each rail connector from this node's own metrics, and the floats and hot
 * wallets against BACKOFFICE_LOW_WATER. Every count reads a small indexed set (waiting or failed
 * states, recent windows: src/backoffice/queries.ts, migration 0026), never every order.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { dateTime, money } from '../console/i18n.js';
import type { Config } from '../config.js';
import { html, type Html } from '../http/html.js';
import type { Language } from '../http/language.js';
import { translator } from '../i18n/messages.js';
import { CURRENCY_CODES, formatMinor, fromDb, parseDecimal, type Currency } from '../money.js';
import {
  failingCallbacksByMerchant,
  hotWallets,
  todaySystemAccounts,
  todayCounts,
  type TodayCutoffs,
} from './queries.js';
import type { BackofficeRouter } from './router.js';
import type { BackofficeServices } from './services.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Unmatched SPEI transfers and rail messages, and callbacks failed for good, are counted over the last day. */
export const RECENT_WINDOW_MS = 24 * HOUR;
/** A return (Pix devolução, SPEI return) still under way after an hour is late: the PSP and STP answer in minutes. */
export const RETURN_LATE_MS = HOUR;
/** A token send not confirmed after 30 minutes is stuck (a confirmed send takes a few minutes on every chain). */
export const CHAIN_STUCK_MS = 30 * MINUTE;
/** A payout of another rail (none today) is late after an hour. */
const OTHER_PAYOUT_LATE_MS = HOUR;

/**
 * When a payout is late, per rail: twice the rail's result timeout (DARAJA_RESULT_TIMEOUT_MS for
 * M-Pesa B2C, PIX_PAYOUT_RESULT_TIMEOUT_MS for Pix), since the order was made: by the first timeout
 * Cashgate asks the rail itself, so by the second nothing came back from the asking either.
 */
export function payoutLateMs(config: Config): { ken: number; bra: number; other: number } {
  const ken = config.kenya.rail === 'daraja' ? config.kenya.resultTimeoutMs : 600_000;
  const bra = config.brazil.rail === 'apipix' ? config.brazil.resultTimeoutMs : 300_000;
  return { ken: 2 * ken, bra: 2 * bra, other: OTHER_PAYOUT_LATE_MS };
}

/** The cut-offs of the counts at `now`. */
export function todayCutoffs(config: Config, now: number): TodayCutoffs {
  const late = payoutLateMs(config);
  return {
    recentSince: now - RECENT_WINDOW_MS,
    returnLateBefore: now - RETURN_LATE_MS,
    chainStuckBefore: now - CHAIN_STUCK_MS,
    payoutLateBefore: { ken: now - late.ken, bra: now - late.bra, other: now - late.other },
  };
}

// --- rail health, from this node's prom-client registry

/** A rail connector's call metrics: `<prefix>_requests_total` and `<prefix>_request_duration_seconds`. */
interface Connector {
  name: string;
  prefix: string;
  /** The label that tells one connection of the family from another (the issuer, the chain). */
  split?: string;
  /** The label that says how a call ended. */
  outcome: string;
}

const CONNECTORS: readonly Connector[] = [
  { name: 'Daraja (M-Pesa)', prefix: 'cashgate_daraja', outcome: 'code' },
  { name: 'Pix PSP', prefix: 'cashgate_pix_psp', outcome: 'outcome' },
  { name: 'Boleto issuer', prefix: 'cashgate_boleto_issuer', split: 'issuer', outcome: 'outcome' },
  { name: 'STP (SPEI)', prefix: 'cashgate_stp', outcome: 'outcome' },
  { name: 'Stripe (OXXO)', prefix: 'cashgate_stripe', outcome: 'outcome' },
  { name: 'Chain node', prefix: 'cashgate_chain_rpc', split: 'chain', outcome: 'outcome' },
];

/** A call that worked: `ok` (Daraja: its ResponseCode 0 too). */
const succeeded = (outcome: string | number | undefined) => outcome === 'ok' || outcome === '0' || outcome === 0;

export interface RailHealth {
  connector: string;
  calls: number;
  errors: number;
  /** The upper bound of the latency bucket holding the 99th percentile, seconds; Infinity above the last; undefined without calls. */
  p99: number | undefined;
  /** When this page first saw the successes grow to their present count (undefined: none seen since it started looking). */
  lastSuccessBy: number | undefined;
  /** Successes this node counted since it started. */
  successes: number;
}

interface Seen {
  successes: number;
  by: number | undefined;
}

/** Per registry: the successes each connector had when the page last read them, and when they last grew. */
const SEEN = new WeakMap<Registry, Map<string, Seen>>();

type Labels = Partial<Record<string, string | number>>;

/**
 * Each connector's calls, errors and p99 latency since this node started (prom-client counters and
 * histograms are cumulative: they cannot give the last hour), and its last success as this page saw
 * it: the first read of the page at which the success count had grown (a counter keeps no time).
 */
export async function railHealth(registry: Registry, now: number): Promise<RailHealth[]> {
  let seen = SEEN.get(registry);
  if (seen === undefined) SEEN.set(registry, (seen = new Map<string, Seen>()));
  const health: RailHealth[] = [];
  for (const connector of CONNECTORS) {
    const calls = registry.getSingleMetric(`${connector.prefix}_requests_total`);
    if (!(calls instanceof Counter)) continue;
    const latency = registry.getSingleMetric(`${connector.prefix}_request_duration_seconds`);
    const byPart = new Map<string, { calls: number; errors: number; buckets: Map<number, number> }>();
    const part = (labels: Labels) => {
      const key = connector.split === undefined ? '' : String(labels[connector.split] ?? '');
      let entry = byPart.get(key);
      if (entry === undefined) byPart.set(key, (entry = { calls: 0, errors: 0, buckets: new Map() }));
      return entry;
    };
    for (const value of (await calls.get()).values) {
      const entry = part(value.labels);
      entry.calls += value.value;
      if (!succeeded(value.labels[connector.outcome])) entry.errors += value.value;
    }
    if (latency instanceof Histogram) {
      for (const value of (await latency.get()).values) {
        const labels = value.labels;
        if (value.metricName?.endsWith('_bucket') !== true || labels.le === undefined) continue;
        const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
        const buckets = part(labels).buckets;
        buckets.set(le, (buckets.get(le) ?? 0) + value.value);
      }
    }
    for (const [key, entry] of [...byPart].sort(([a], [b]) => a.localeCompare(b))) {
      const name = key === '' ? connector.name : `${connector.name} · ${key}`;
      const successes = entry.calls - entry.errors;
      const before = seen.get(name);
      const by = before === undefined ? undefined : successes > before.successes ? now : before.by;
      seen.set(name, { successes, by });
      health.push({
        connector: name,
        calls: entry.calls,
        errors: entry.errors,
        p99: p99Of(entry.buckets),
        lastSuccessBy: by,
        successes,
      });
    }
  }
  return health;
}

/** The upper bound of the cumulative bucket that reaches 99 % of the observations. */
function p99Of(buckets: Map<number, number>): number | undefined {
  const sorted = [...buckets].sort(([a], [b]) => a - b);
  const total = sorted.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  return sorted.find(([, cumulative]) => cumulative >= 0.99 * total)?.[0];
}

// --- floats and hot wallets

export interface Balance {
  /** The currency (or USDT) and where the figure comes from. */
  currency: string;
  where: string;
  amount: bigint | undefined;
  lowWater: bigint | undefined;
}

const USDT_DECIMALS = 6;

/** The hot wallets' USDT as the token sender last read it on this node (a gauge in whole units). */
async function hotWalletReadings(registry: Registry): Promise<Map<string, bigint>> {
  const gauge = registry.getSingleMetric('cashgate_chain_hot_wallet_balance');
  const readings = new Map<string, bigint>();
  if (!(gauge instanceof Gauge)) return readings;
  for (const value of (await gauge.get()).values) {
    const labels = value.labels;
    if (labels.asset !== 'USDT' || !Number.isFinite(value.value)) continue;
    const minor = parseDecimal(value.value.toFixed(USDT_DECIMALS), USDT_DECIMALS, { signed: true });
    if (minor !== undefined) readings.set(String(labels.chain ?? ''), minor);
  }
  return readings;
}

/**
 * The float at the rail of each currency, as the ledger has it: minus the balance of
 * system/<currency>/rail_clearing (collections come in through it, payouts leave through it); and
 * each chain's hot wallet USDT. Each against its low-water mark when BACKOFFICE_LOW_WATER names it.
 */
export async function balances(deps: BackofficeServices): Promise<Balance[]> {
  const lowWater = deps.config.backofficeLowWater;
  const currencies: Currency[] = [...CURRENCY_CODES];
  const [accounts, wallets, readings] = await Promise.all([
    todaySystemAccounts(deps.store.read, 'rail_clearing', currencies),
    hotWallets(deps.store.read),
    hotWalletReadings(deps.metrics),
  ]);
  const byCurrency = new Map(accounts.map((a) => [a.currency, -fromDb(a.balance)]));
  const rows: Balance[] = currencies.map((currency) => ({
    currency,
    where: `system/${currency}/rail_clearing`,
    amount: byCurrency.get(currency) ?? 0n,
    lowWater: lowWater[currency],
  }));
  const chains = new Set([...wallets.map((w) => w.chain), ...readings.keys()]);
  for (const chain of [...chains].sort()) {
    const address = wallets.find((w) => w.chain === chain)?.address;
    rows.push({
      currency: 'USDT',
      where: address === undefined ? chain : `${chain} ${address}`,
      amount: readings.get(chain),
      lowWater: lowWater.USDT,
    });
  }
  return rows;
}

const amountText = (lang: Language, minor: bigint, currency: string): string =>
  currency === 'USDT' ? `${formatMinor(minor, USDT_DECIMALS)} USDT` : money(lang, minor, currency);

export function registerTodayPage(router: BackofficeRouter, deps: BackofficeServices): void {
  router.get('/', 'today', async (ctx, _request, reply) => {
    const t = translator('backoffice.today', ctx.lang);
    const now = ctx.now;
    const cutoffs = todayCutoffs(deps.config, now);
    const [counts, failing, health, money_] = await Promise.all([
      todayCounts(deps.store.read, cutoffs),
      failingCallbacksByMerchant(deps.store.read, cutoffs.recentSince, 10),
      railHealth(deps.metrics, now),
      balances(deps),
    ]);
    const late = payoutLateMs(deps.config);
    const minutes = (ms: number) => Math.round(ms / MINUTE);
    const lateRule = { ken: minutes(late.ken), bra: minutes(late.bra), other: minutes(late.other) };
    const card = (count: number, label: string, href: string, note?: string): Html =>
      html`<li${count > 0 ? html` class="attention"` : ''}><div class="figure">${String(count)}</div><a href="${href}">${label}</a>${
        note === undefined ? '' : html`<br><span class="muted">${note}</span>`
      }</li>`;
    const incoming = html`<section class="panel" aria-labelledby="today-incoming"><h2 id="today-incoming">${t('incoming')}</h2><ul class="counts">
${card(counts.pixUnmatched, t('pixUnmatched'), '/backoffice/queues#pix-unmatched')}
${card(counts.speiUnmatched, t('speiUnmatched'), '/backoffice/queues#spei-unmatched', t('lastDay'))}
${card(counts.boletoSuspense, t('boletoSuspense'), '/backoffice/queues#boleto-suspense')}
${card(counts.railMessagesUnmatched, t('railMessagesUnmatched'), '/backoffice/queues#rail-unmatched', t('lastDay'))}
</ul></section>`;
    const returns = html`<section class="panel" aria-labelledby="today-returns"><h2 id="today-returns">${t('returns')}</h2><ul class="counts">
${card(counts.pixReturnsFailed, t('pixReturnsFailed'), '/backoffice/queues#returns')}
${card(counts.pixReturnsLate, t('pixReturnsLate'), '/backoffice/queues#returns', t('lateAfter', { minutes: minutes(RETURN_LATE_MS) }))}
${card(counts.speiReturnsFailed, t('speiReturnsFailed'), '/backoffice/queues#returns')}
${card(counts.speiReturnsLate, t('speiReturnsLate'), '/backoffice/queues#returns', t('lateAfter', { minutes: minutes(RETURN_LATE_MS) }))}
</ul></section>`;
    const outgoing = html`<section class="panel" aria-labelledby="today-outgoing"><h2 id="today-outgoing">${t('outgoing')}</h2><ul class="counts">
${card(counts.payoutsLate, t('payoutsLate'), '/backoffice/queues#in-doubt', t('payoutsLateRule', lateRule))}
${card(counts.handOversRetrying, t('handOversRetrying'), '/backoffice/system')}
${card(counts.chainSendsStuck, t('chainSendsStuck'), '/backoffice/orders', t('lateAfter', { minutes: minutes(CHAIN_STUCK_MS) }))}
${card(counts.approvalsPending, t('approvalsPending'), '/backoffice/queues#approvals')}
</ul></section>`;
    const callbacks = html`<section class="panel" aria-labelledby="today-callbacks"><h2 id="today-callbacks">${t('callbacks')}</h2>
<p class="muted">${t('callbacksRule')}</p>${
      failing.length === 0
        ? html`<p>${t('noneFailing')}</p>`
        : html`<div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('merchant')}</th><th scope="col">${t('failing')}</th></tr></thead>
<tbody>${failing.map(
            (f) =>
              html`<tr><td><a href="/backoffice/merchants/${f.merchantId}">${f.name ?? f.merchantId}</a></td><td class="num">${String(f.count)}</td>
</tr>`,
          )}</tbody></table></div>`
    }</section>`;
    const seconds = (s: number | undefined) =>
      s === undefined ? '—' : s === Infinity ? t('aboveLastBucket') : t('seconds', { seconds: s });
    const rails = html`<section class="panel" aria-labelledby="today-rails"><h2 id="today-rails">${t('rails')}</h2>
<p class="muted">${t('railsNote')}</p>${
      health.length === 0
        ? html`<p>${t('noRails')}</p>`
        : html`<div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('connector')}</th><th scope="col">${t('calls')}</th>
<th scope="col">${t('errorRate')}</th><th scope="col">${t('p99')}</th><th scope="col">${t('lastSuccess')}</th></tr></thead><tbody>${health.map(
            (h) =>
              html`<tr><td>${h.connector}</td><td class="num">${String(h.calls)}</td><td class="num">${
                h.calls === 0 ? '—' : `${((100 * h.errors) / h.calls).toFixed(1)} %`
              }</td><td class="num">${seconds(h.p99)}</td><td class="date">${
                h.lastSuccessBy !== undefined
                  ? t('seenBy', { time: dateTime(ctx.lang, h.lastSuccessBy) })
                  : h.successes > 0
                    ? t('beforeFirstLook')
                    : t('noSuccess')
              }</td></tr>`,
          )}</tbody></table></div>`
    }</section>`;
    const floats = html`<section class="panel" aria-labelledby="today-floats"><h2 id="today-floats">${t('floats')}</h2>
<p class="muted">${t('floatsNote')}</p><div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('account')}</th>
<th scope="col">${t('balance')}</th>
<th scope="col">${t('lowWater')}</th><th scope="col">${t('state')}</th></tr></thead><tbody>${money_.map((b) => {
      const low = b.amount !== undefined && b.lowWater !== undefined && b.amount < b.lowWater;
      return html`<tr><td>${b.currency}<br><span class="muted">${b.where}</span></td><td class="num">${
        b.amount === undefined ? t('noReading') : amountText(ctx.lang, b.amount, b.currency)
      }</td><td class="num">${b.lowWater === undefined ? '—' : amountText(ctx.lang, b.lowWater, b.currency)}</td><td>${
        b.lowWater === undefined || b.amount === undefined
          ? '—'
          : low
            ? html`<span class="badge bad">${t('belowLowWater')}</span>`
            : html`<span class="badge ok">${t('aboveLowWater')}</span>`
      }</td></tr>`;
    })}</tbody></table></div></section>`;
    return ctx.page(reply, {
      title: t('title'),
      section: 'today',
      body: html`<h1>${t('title')}</h1><p class="muted">${t('asOf', { time: dateTime(ctx.lang, now) })}</p>
${incoming}${returns}${outgoing}${callbacks}${rails}${floats}`,
    });
  });
}
