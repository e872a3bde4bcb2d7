/**
 * System: the nodes on this database and the leases each holds (`GET /admin/v1/nodes`), this node's
 * workers and their last runs, versions and the migrations applied, and the configuration in force
 * with every secret masked.
 */
import { Gauge } from 'prom-client';
import { dateTime } from '../console/i18n.js';
import { html, type Html } from '../http/html.js';
import { translator } from '../i18n/messages.js';
import { SERVICE_VERSION } from '../version.js';
import { WORKER_LAST_RUN } from '../workers/worker.js';
import type { BackofficeRouter } from './router.js';
import type { BackofficeServices } from './services.js';
import { readFailed } from './view.js';

interface NodeRow {
  id: string;
  host: string;
  pid: number;
  role: string;
  version: string;
  startedAt: number;
  lastHeartbeatAt: number;
  state: string;
  endedAt: number | null;
  leases: Record<string, number>;
}

/** A setting whose name says it holds a secret (or a key, a certificate, personal data such as a Pix key). */
const SECRET_NAME = /secret|token|password|passphrase|private|mnemonic|credential|passkey|pem$|cert|key$/i;

/**
 * A value as the page may show it: a PEM block never; a URL as its scheme, host and port only
 * (providers put API keys in paths and queries, passwords in user info or `?password=`).
 */
function shownValue(value: string): string {
  if (value.includes('-----BEGIN')) return '••••';
  return value.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s,]*/gi, (url: string) => {
    try {
      const parsed = new URL(url);
      const rest = `${parsed.pathname === '/' ? '' : parsed.pathname}${parsed.search}`;
      return `${parsed.protocol}//${parsed.host}${rest === '' ? '' : '/••••'}`;
    } catch {
      return '••••';
    }
  });
}

/** The configuration as `path = value` lines, secrets masked (`••••` when set, `—` when not). */
export function maskedSettings(config: unknown): [string, string][] {
  const out: [string, string][] = [];
  const walk = (value: unknown, path: string, secret: boolean): void => {
    if (value === undefined || value === null || value === '') {
      out.push([path, '—']);
    } else if (secret && typeof value !== 'boolean' && typeof value !== 'number') {
      out.push([path, '••••']);
    } else if (value instanceof Map) {
      for (const [k, v] of value) walk(v, `${path}[${String(k)}]`, false);
    } else if (value instanceof Uint8Array) {
      out.push([path, `${value.length} bytes`]);
    } else if (value instanceof Date) {
      out.push([path, value.toISOString()]);
    } else if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) {
      out.push([path, shownValue(value.map(String).join(', '))]);
    } else if (typeof value === 'object') {
      const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
      for (const [k, v] of entries) walk(v, path === '' ? k : `${path}.${k}`, SECRET_NAME.test(k));
    } else if (
      typeof value === 'string' ||
      typeof value === 'number' ||
      typeof value === 'boolean' ||
      typeof value === 'bigint'
    ) {
      out.push([path, shownValue(String(value))]);
    }
  };
  walk(config, '', false);
  return out;
}

export function registerSystemPages(router: BackofficeRouter, deps: BackofficeServices): void {
  router.get('/system', 'system', async (ctx, _request, reply) => {
    const t = translator('backoffice.system', ctx.lang);
    const listed = await ctx.call(reply, 'GET /admin/v1/nodes', {});
    if (!listed.ok) return readFailed(ctx, reply, listed);
    const { nodes, nodeId, deadAfterMs } = listed.result as { nodes: NodeRow[]; nodeId: string; deadAfterMs: number };
    const nodeRows = nodes.map((n) => {
      const leases = Object.entries(n.leases);
      return html`<tr><td><code>${n.id}</code>${n.id === nodeId ? html` <span class="badge">${t('thisNode')}</span>` : ''}</td>
<td>${n.host} · ${n.pid}</td><td>${n.role}</td><td>${n.version}</td>
<td><span class="badge${n.state === 'alive' ? ' ok' : n.state === 'gone' ? '' : ' bad'}">${n.state}</span></td>
<td class="date">${dateTime(ctx.lang, n.lastHeartbeatAt)}</td><td>${
        leases.length === 0 ? '—' : html`${leases.map(([kind, count]) => html`<code>${kind}</code> ${count}<br>`)}`
      }</td></tr>`;
    });
    const gauge = deps.metrics.getSingleMetric(WORKER_LAST_RUN);
    const runs = new Map<string, { ok?: number; failed?: number }>();
    if (gauge instanceof Gauge) {
      for (const value of (await gauge.get()).values) {
        const worker = String(value.labels.worker);
        const entry = runs.get(worker) ?? {};
        entry[value.labels.outcome === 'failed' ? 'failed' : 'ok'] = value.value * 1000;
        runs.set(worker, entry);
      }
    }
    const workerRows: Html[] = [...runs]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([name, r]) =>
          html`<tr><td><code>${name}</code></td><td class="date">${dateTime(ctx.lang, r.ok)}</td><td class="date">${
            r.failed === undefined ? '—' : html`<span class="error">${dateTime(ctx.lang, r.failed)}</span>`
          }</td></tr>`,
      );
    const migrations = await deps.store.migrations();
    const pending = migrations.filter((m) => m.executedAt === undefined);
    const settings = maskedSettings(deps.config);
    return ctx.page(reply, {
      title: t('title'),
      section: 'system',
      body: html`<h1>${t('title')}</h1>
<section class="panel" aria-labelledby="sys-nodes"><h2 id="sys-nodes">${t('nodes')}</h2>
<p class="muted">${t('nodesLead', { seconds: Math.round(deadAfterMs / 1000) })}</p>
<div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('node')}</th><th scope="col">${t('hostPid')}</th><th scope="col">${t('role')}</th>
<th scope="col">${t('version')}</th>
<th scope="col">${t('state')}</th><th scope="col">${t('heartbeat')}</th><th scope="col">${t('leases')}</th></tr></thead><tbody>${nodeRows}</tbody></table>
</div></section>
<section class="panel" aria-labelledby="sys-workers"><h2 id="sys-workers">${t('workers')}</h2><p class="muted">${t('workersLead')}</p>${
        workerRows.length === 0
          ? html`<p>${t('noWorkers')}</p>`
          : html`<div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('worker')}</th><th scope="col">${t('lastOk')}</th>
<th scope="col">${t('lastFailed')}</th></tr></thead><tbody>${workerRows}</tbody></table></div>`
      }</section>
<section class="panel" aria-labelledby="sys-versions"><h2 id="sys-versions">${t('versions')}</h2><dl>
<dt>Cashgate</dt><dd>${SERVICE_VERSION}</dd><dt>Node.js</dt><dd>${process.version}</dd><dt>${t('database')}</dt><dd>${deps.store.dialect}</dd>
<dt>${t('migrations')}</dt><dd>${t('migrationsApplied', { applied: migrations.length - pending.length, total: migrations.length })}</dd></dl>
<details><summary>${t('migrationList')}</summary><div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('migration')}</th>
<th scope="col">${t('appliedAt')}</th></tr></thead><tbody>${migrations.map(
        (m) =>
          html`<tr><td><code>${m.name}</code></td>
<td class="date">${m.executedAt === undefined ? t('pending') : dateTime(ctx.lang, m.executedAt.getTime())}</td></tr>`,
      )}</tbody></table></div></details></section>
<section class="panel" aria-labelledby="sys-config"><h2 id="sys-config">${t('config')}</h2><p class="muted">${t('configLead')}</p>
<div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('setting')}</th><th scope="col">${t('value')}</th></tr></thead><tbody>${settings.map(
        ([k, v]) => html`<tr><td><code>${k}</code></td><td><code>${v}</code></td></tr>`,
      )}</tbody></table></div></section>`,
    });
  });
}
