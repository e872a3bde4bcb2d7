/**
 * The Developer Center's API keys: the list, creating a key (its secret shown once), viewing and
 * editing one (an edit restarts the activation delay), disabling, enabling and deleting it. Every
 * lookup goes through the signed-in user's merchant, so another merchant's key is simply not found.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OperatorError } from '../admin/failures.js';
import { PERMISSION_GRANTS } from '../auth/permissions.js';
import { ApiError, describeFailure } from '../http/failures.js';
import { html, type Html } from '../http/html.js';
import type { Language } from '../http/language.js';
import {
  LAST_USE_PRECISION_MS,
  ROLL_OVERLAP_MAX_MS,
  ROLL_OVERLAP_MIN_MS,
  type ApiKeyView,
  type KeySettings,
} from '../merchants/service.js';
import { badge, copyButton, errorSummary, notice, textField, type FieldError } from './forms.js';
import { hasMessage, translator, type Translator } from '../i18n/messages.js';
import { dateTime } from './i18n.js';
import type { ConsoleServices } from './plugin.js';
import { formOf, queryParam, seeOther, type ConsoleContext, type ConsoleRouter } from './router.js';

/** The admin API's limit on a key's label. */
export const LABEL_MAX = 100;

type T = Translator<'console.keys'>;

/** A permission's short name in words ("Brazil collections"). */
export function permissionName(lang: Language, permission: string): string {
  return hasMessage('console.permissions', permission)
    ? translator('console.permissions', lang)(permission)
    : permission;
}

/** What a permission lets a key do, in words. */
export function permissionDoes(lang: Language, permission: string): string {
  const key = `${permission}.does`;
  return hasMessage('console.permissions', key) ? translator('console.permissions', lang)(key) : '';
}

/** A key's permissions as words, each with its code. */
function permissionList(lang: Language, permissions: readonly string[]): Html {
  return html`<ul class="perms">${permissions.map(
    (p) =>
      html`<li><strong>${permissionName(lang, p)}</strong> <span class="mono">(${p})</span>: ${permissionDoes(lang, p)}</li>`,
  )}</ul>`;
}

/** The overlaps a key roll offers (the service allows ROLL_OVERLAP_MIN_MS to ROLL_OVERLAP_MAX_MS). */
const ROLL_OVERLAPS: readonly { ms: number; text: 'overlap1h' | 'overlap1d' | 'overlap7d' | 'overlap15m' }[] = [
  { ms: 15 * 60_000, text: 'overlap15m' },
  { ms: 3_600_000, text: 'overlap1h' },
  { ms: 86_400_000, text: 'overlap1d' },
  { ms: 7 * 86_400_000, text: 'overlap7d' },
];

/** How long a just-created secret waits for the page that shows it (the redirect is followed at once). */
export const CREATED_SECRET_TTL_MS = 5 * 60_000;

/** Whole seconds until a moment (at least 1 while it is in the future). */
export function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}

/** A badge that counts down to `activeAt` (updated by the layout's script; correct without it). */
export function activationCountdown(lang: Language, activeAt: number, now: number): Html {
  const t = translator('console.keys', lang);
  const template = t('takesEffectIn', { s: '{s}' });
  const text = t('takesEffectIn', { s: secondsUntil(activeAt, now) });
  const over = t('active');
  return html`<span class="badge wait" data-until="${activeAt}" data-template="${template}" data-over="${over}" data-over-class="badge ok">${text}</span>`;
}

/**
 * The status of a key: pending with its activation time and a countdown while its activation delay
 * runs; active with the moment it stops when a roll scheduled one.
 */
export function keyStatus(
  lang: Language,
  key: Pick<ApiKeyView, 'status' | 'activeAt'> & Partial<Pick<ApiKeyView, 'disableAt'>>,
  now: number,
): Html {
  const t = translator('console.keys', lang);
  if (key.status === 'deleted') return badge(t('deleted'));
  if (key.status === 'disabled') return badge(t('disabled'), 'bad');
  const stops =
    key.disableAt === undefined || key.disableAt === null
      ? html``
      : html` <span class="when">${t('stopsAt', { time: dateTime(lang, key.disableAt) })}</span>`;
  const until = t('pendingUntil', { time: dateTime(lang, key.activeAt) });
  return key.activeAt > now
    ? html`<span class="when">${t('pending')} ${until}</span> ${activationCountdown(lang, key.activeAt, now)}${stops}`
    : html`${badge(t('active'), 'ok')}${stops}`;
}

/** When a request last named the key, or "never". */
function lastUsed(t: T, lang: Language, key: ApiKeyView): string {
  return key.lastUsedAt === null ? t('never') : dateTime(lang, key.lastUsedAt);
}

interface KeyFormValues {
  label: string;
  permissions: string[];
  ipWhitelist: string;
  debug: boolean;
}

const EMPTY_FORM: KeyFormValues = { label: '', permissions: [], ipWhitelist: '', debug: false };

function valuesOf(key: ApiKeyView): KeyFormValues {
  return { label: key.label, permissions: key.permissions, ipWhitelist: key.ipWhitelist.join(', '), debug: key.debug };
}

function readForm(request: FastifyRequest): KeyFormValues {
  const form = formOf(request);
  return {
    label: (form.get('label') ?? '').trim(),
    permissions: form.getAll('permissions'),
    ipWhitelist: form.get('ipWhitelist') ?? '',
    debug: form.get('debug') === '1',
  };
}

/** The settings the service checks (the admin API's rules); the label's limit is checked here, like the admin API's schema. */
function settingsOf(
  values: KeyFormValues,
  lang: Language,
): { settings: KeySettings & { permissions: string[]; ipWhitelist: string } } | { error: FieldError } {
  if (values.label.length > LABEL_MAX) {
    return {
      error: {
        field: 'label',
        message: describeFailure(
          { kind: 'invalid_field', field: 'label', rule: { rule: 'maxLength', max: LABEL_MAX } },
          lang,
        ).text,
      },
    };
  }
  return {
    settings: {
      label: values.label,
      permissions: values.permissions,
      ipWhitelist: values.ipWhitelist,
      debug: values.debug,
    },
  };
}

/** A field error from the service's refusal of a field; anything else is not the form's business. */
function fieldErrorOf(error: unknown, lang: Language): FieldError {
  if (error instanceof ApiError && error.failure.kind === 'invalid_field') {
    return { field: error.failure.field, message: describeFailure(error.failure, lang).text };
  }
  throw error;
}

function keyFields(t: T, lang: Language, values: KeyFormValues, errors: readonly FieldError[]): Html {
  const permissionError = errors.find((e) => e.field === 'permissions');
  const permissionErrorLine =
    permissionError !== undefined ? html`<p class="error" id="permissions-error">${permissionError.message}</p>` : '';
  return html`${textField({ name: 'label', label: t('label'), value: values.label, hint: t('labelHint', { max: LABEL_MAX }), maxlength: LABEL_MAX, errors })}
<fieldset id="permissions" aria-describedby="permissions-hint${permissionError !== undefined ? ' permissions-error' : ''}"><legend>${t('permissions')}</legend>
<p class="muted" id="permissions-hint">${t('permissionsHint')}</p>${permissionErrorLine}
<div class="checks wide">${PERMISSION_GRANTS.map(
    (p) =>
      html`<div class="perm"><label class="check"><input type="checkbox" name="permissions" value="${p}"
aria-describedby="perm-${p}-does"${values.permissions.includes(p) ? html` checked` : ''}${
        permissionError !== undefined ? html` aria-invalid="true"` : ''
      }> <span class="mono">${p}</span></label><p class="muted" id="perm-${p}-does">${permissionName(lang, p)}: ${permissionDoes(lang, p)}</p></div>`,
  )}</div></fieldset>
${textField({ name: 'ipWhitelist', label: t('ipWhitelist'), value: values.ipWhitelist, hint: t('ipWhitelistHint'), errors })}
<label class="check"><input type="checkbox" id="debug" name="debug" value="1"
aria-describedby="debug-hint"${values.debug ? html` checked` : ''}> ${t('debug')}</label>
<p class="muted" id="debug-hint">${t('debugHint')}</p>`;
}

function createForm(ctx: ConsoleContext, t: T, values: KeyFormValues, errors: readonly FieldError[]): Html {
  const fields = keyFields(t, ctx.lang, values, errors);
  return html`<div class="panel" id="create"><h2>${t('createTitle')}</h2>${errorSummary(ctx.lang, errors)}
<form method="post" action="/console/keys" novalidate>${ctx.csrf}${fields}<button type="submit">${t('create')}</button></form></div>`;
}

function keyPath(accessKey: string): string {
  return `/console/keys/${encodeURIComponent(accessKey)}`;
}

async function listPage(
  ctx: ConsoleContext,
  reply: FastifyReply,
  deps: ConsoleServices,
  input: { status?: number; values?: KeyFormValues; errors?: FieldError[]; info?: string },
): Promise<FastifyReply> {
  const t = translator('console.keys', ctx.lang);
  const keys = await allApiKeys(deps, ctx.merchantId);
  const now = deps.clock.now();
  const rows = keys.map((k, i) => {
    const copyId = `key-${i}`;
    const live = k.status !== 'deleted';
    return html`<tr><td><code id="${copyId}">${k.accessKey}</code>${live ? copyButton(copyId, ctx.lang) : ''}</td>
<td>${k.label === '' ? html`<span class="muted">${t('noLabel')}</span>` : k.label}</td>
<td>${k.permissions.map((p) => permissionName(ctx.lang, p)).join(', ')}<br><span class="mono muted">${k.permissions.join(', ')}</span></td>
<td class="mono">${k.ipWhitelist.join(', ')}</td>
<td>${k.debug ? badge(t('on'), 'wait') : t('off')}</td><td>${keyStatus(ctx.lang, k, now)}${
      k.replacedBy !== null && k.status === 'active'
        ? html`<br><span class="muted">${t('replacedBy')} <code>${k.replacedBy}</code></span>`
        : ''
    }</td>
<td>${lastUsed(t, ctx.lang, k)}</td>
<td>${live ? html`<a href="${keyPath(k.accessKey)}">${t('view')}</a>` : '—'}</td></tr>`;
  });
  const columns = [
    'accessKey',
    'label',
    'permissions',
    'ipWhitelist',
    'debug',
    'status',
    'lastUsed',
    'actions',
  ] as const;
  const headings = columns.map((column) => html`<th scope="col">${t(column)}</th>`);
  return ctx.page(reply, {
    status: input.status ?? 200,
    title: t('title'),
    section: 'keys',
    body: html`<h1>${t('title')}</h1>${notice(input.info)}<p>${t('lead')}</p>
<div class="panel"><h2>${t('yourKeys')}</h2>${
      keys.length === 0
        ? html`<p>${t('noKeys')}</p>`
        : html`<div class="table" tabindex="0"><table><thead><tr>${headings}</tr></thead><tbody>${rows}</tbody></table></div>
<p class="muted" id="last-used-note">${t('lastUsedNote', { minutes: LAST_USE_PRECISION_MS / 60_000 })}</p>`
    }</div>
${createForm(ctx, t, input.values ?? { ...EMPTY_FORM }, input.errors ?? [])}`,
  });
}

/**
 * Every key of the merchant, deleted ones too (the service's list leaves them out; they stay on
 * record and are shown as deleted). Read without the sealed secret.
 */
/** Every key of the merchant, deleted ones included (listed as deleted, without actions). */
export function allApiKeys(deps: Pick<ConsoleServices, 'merchants'>, merchantId: string): Promise<ApiKeyView[]> {
  return deps.merchants.listApiKeys(merchantId, { includeDeleted: true });
}

const NOTICES = ['saved', 'enabled', 'disabled', 'rollCancelled'] as const;

function keyPage(
  ctx: ConsoleContext,
  reply: FastifyReply,
  deps: ConsoleServices,
  key: ApiKeyView,
  input: { status?: number; values?: KeyFormValues; errors?: FieldError[]; done?: string },
): FastifyReply {
  const t = translator('console.keys', ctx.lang);
  const now = deps.clock.now();
  const errors = input.errors ?? [];
  const done = (NOTICES as readonly string[]).includes(input.done ?? '') ? input.done : undefined;
  const info =
    done === 'saved'
      ? key.activeAt > now
        ? t('saved', { s: secondsUntil(key.activeAt, now) })
        : t('savedActive')
      : done === 'enabled'
        ? t('enabledNotice')
        : done === 'disabled'
          ? t('disabledNotice')
          : done === 'rollCancelled'
            ? t('rollCancelledNotice')
            : undefined;
  const path = keyPath(key.accessKey);
  const title = t('keyTitle', { label: key.label === '' ? key.accessKey : key.label });
  const details = html`<div class="panel"><dl>
<dt>${t('accessKey')}</dt><dd><code id="access-key">${key.accessKey}</code> ${copyButton('access-key', ctx.lang)}</dd>
<dt>${t('label')}</dt><dd>${key.label === '' ? t('noLabel') : key.label}</dd>
<dt>${t('permissions')}</dt><dd>${permissionList(ctx.lang, key.permissions)}</dd>
<dt>${t('ipWhitelist')}</dt><dd class="mono">${key.ipWhitelist.join(', ')}</dd>
<dt>${t('debug')}</dt><dd>${key.debug ? t('on') : t('off')}</dd>
<dt>${t('status')}</dt><dd>${keyStatus(ctx.lang, key, now)}</dd>
<dt>${t('activeAt')}</dt><dd>${dateTime(ctx.lang, key.activeAt)}</dd>${
    key.disableAt !== null ? html`<dt>${t('disableAt')}</dt><dd>${dateTime(ctx.lang, key.disableAt)}</dd>` : ''
  }${
    key.replacedBy !== null
      ? html`<dt>${t('replacedBy')}</dt><dd><a class="mono" href="${keyPath(key.replacedBy)}">${key.replacedBy}</a></dd>`
      : ''
  }
<dt>${t('lastUsed')}</dt><dd>${lastUsed(t, ctx.lang, key)} <span class="muted">${t('lastUsedNote', { minutes: LAST_USE_PRECISION_MS / 60_000 })}</span></dd>
<dt>${t('created')}</dt><dd>${dateTime(ctx.lang, key.createdAt)}</dd>
<dt>${t('updated')}</dt><dd>${dateTime(ctx.lang, key.updatedAt)}</dd></dl></div>`;
  const fields = keyFields(t, ctx.lang, input.values ?? valuesOf(key), errors);
  const forms =
    key.status === 'deleted'
      ? html`<p class="warning">${t('deletedText')}</p>`
      : html`<div class="panel" id="edit"><h2>${t('edit')}</h2>${errorSummary(ctx.lang, errors)}<p class="warning">${t('editRestarts')}</p>
<form method="post" action="${path}" novalidate>${ctx.csrf}${fields}<button type="submit">${t('save')}</button></form></div>
${rollPanel(ctx, t, key, errors)}
<div class="panel"><h2>${t('stateTitle')}</h2><p>${t('disableText')}</p><form method="post" action="${path}/enabled">${ctx.csrf}${
          key.status === 'disabled'
            ? html`<input type="hidden" name="enabled" value="1"><button type="submit">${t('enable')}</button>`
            : html`<input type="hidden" name="enabled" value="0"><button type="submit" class="secondary">${t('disable')}</button>`
        }</form></div>
<div class="panel"><h2>${t('deleteTitle')}</h2><p>${t('deleteText')}</p><form method="post" action="${path}/delete"
data-confirm="${t('deleteConfirm')}">${ctx.csrf}<button type="submit" class="danger">${t('delete')}</button></form></div>`;
  return ctx.page(reply, {
    status: input.status ?? 200,
    title,
    section: 'keys',
    body: html`<p><a href="/console/keys">${t('backToKeys')}</a></p><h1>${title}</h1>${notice(info)}${details}${forms}`,
  });
}

/** The key roll: a new key now, this one stopping after the chosen overlap. */
function rollPanel(ctx: ConsoleContext, t: T, key: ApiKeyView, errors: readonly FieldError[]): Html {
  const path = keyPath(key.accessKey);
  if (key.status === 'active' && key.disableAt !== null && key.replacedBy !== null) {
    return html`<div class="panel" id="roll"><h2>${t('rollTitle')}</h2><p class="warning">${t('rolling', {
      key: key.replacedBy,
      time: dateTime(ctx.lang, key.disableAt),
    })}</p><p>${t('cancelRollText')}</p><form method="post" action="${path}/enabled">${ctx.csrf}<input type="hidden"
name="enabled" value="1"><button type="submit" class="secondary">${t('cancelRoll')}</button></form></div>`;
  }
  if (key.status !== 'active' || key.disableAt !== null)
    return html`<div class="panel" id="roll"><h2>${t('rollTitle')}</h2><p>${t('rollNotActive')}</p></div>`;
  const overlapError = errors.find((e) => e.field === 'overlap');
  return html`<div class="panel" id="roll"><h2>${t('rollTitle')}</h2><p>${t('rollText')}</p>
<form method="post" action="${path}/roll" data-confirm="${t('rollConfirm')}">${ctx.csrf}
<label for="overlap">${t('overlap')}</label>${overlapError !== undefined ? html`<p class="error" id="overlap-error">${overlapError.message}</p>` : ''}
<select id="overlap" name="overlap"${overlapError !== undefined ? html` aria-invalid="true" aria-describedby="overlap-error"` : ''}>${ROLL_OVERLAPS.map(
    (o) => html`<option value="${o.ms}"${o.ms === 86_400_000 ? html` selected` : ''}>${t(o.text)}</option>`,
  )}</select>
<button type="submit">${t('roll')}</button></form></div>`;
}

/** A key the service says is not the merchant's → 404; deleted → the key page saying it cannot change (409). */
async function whenChangeRefused(
  ctx: ConsoleContext,
  reply: FastifyReply,
  deps: ConsoleServices,
  accessKey: string,
  error: unknown,
): Promise<FastifyReply> {
  if (error instanceof OperatorError && error.failure.kind === 'api_key_not_found') return ctx.notFound(reply);
  if (error instanceof OperatorError && error.failure.kind === 'api_key_deleted') {
    const key = await deps.merchants.findApiKey(ctx.merchantId, accessKey);
    return key === undefined ? ctx.notFound(reply) : keyPage(ctx, reply, deps, key, { status: 409 });
  }
  throw error;
}

/** The console's pages for API keys (Developer Center). */
export function registerKeyPages(router: ConsoleRouter, deps: ConsoleServices): void {
  router.get('/console/keys', async (ctx, request, reply) => {
    const t = translator('console.keys', ctx.lang);
    const deleted = queryParam(request, 'deleted');
    return listPage(ctx, reply, deps, {
      info: /^[A-Za-z0-9]{1,64}$/.test(deleted) ? t('deletedNotice', { key: deleted }) : undefined,
    });
  });

  // POST, 303, GET: a reload of the page that shows the new key never sends the form again.
  router.post('/console/keys', async (ctx, request, reply) => {
    const values = readForm(request);
    const parsed = settingsOf(values, ctx.lang);
    if ('error' in parsed) return listPage(ctx, reply, deps, { status: 400, values, errors: [parsed.error] });
    let created;
    try {
      created = await deps.merchants.createApiKey(ctx.merchantId, parsed.settings);
    } catch (error) {
      return listPage(ctx, reply, deps, { status: 400, values, errors: [fieldErrorOf(error, ctx.lang)] });
    }
    await deps.accounts.holdCreatedKey(ctx.session, created.accessKey, created.secretKey, CREATED_SECRET_TTL_MS);
    return seeOther(reply, `${keyPath(created.accessKey)}/created`);
  });

  // The page the creation redirects to: the secret on its first load by the creating session, the
  // key's details and a word that the secret was shown once on any later one (a reload).
  router.get('/console/keys/:accessKey/created', async (ctx, request, reply) => {
    const t = translator('console.keys', ctx.lang);
    const { accessKey = '' } = request.params as { accessKey?: string };
    const key = await deps.merchants.findApiKey(ctx.merchantId, accessKey);
    if (key === undefined) return ctx.notFound(reply);
    const secretKey = await deps.accounts.takeCreatedKey(ctx.session, key.accessKey);
    const now = deps.clock.now();
    void reply.header('cache-control', 'no-store');
    const secret =
      secretKey !== undefined && key.status !== 'deleted'
        ? html`<p class="warning" role="alert">${t('secretWarning')}</p>
<label for="new-access-key">${t('accessKey')}</label><input type="text"
readonly class="secret" id="new-access-key" value="${key.accessKey}"> ${copyButton('new-access-key', ctx.lang)}
<label for="new-secret-key">${t('secretKey')}</label><input type="text"
readonly class="secret" id="new-secret-key" value="${secretKey}" autocomplete="off"> ${copyButton('new-secret-key', ctx.lang)}`
        : html`<p class="warning">${t('shownOnce')}</p>
<dl><dt>${t('accessKey')}</dt><dd><code id="access-key">${key.accessKey}</code> ${copyButton('access-key', ctx.lang)}</dd>
<dt>${t('label')}</dt><dd>${key.label === '' ? t('noLabel') : key.label}</dd>
<dt>${t('status')}</dt><dd>${keyStatus(ctx.lang, key, now)}</dd></dl>`;
    // A roll's new key: say which key it replaces and when that one stops.
    const replaced = (await allApiKeys(deps, ctx.merchantId)).find(
      (k) => k.replacedBy === key.accessKey && k.disableAt !== null,
    );
    const rolled =
      replaced === undefined || replaced.disableAt === null
        ? html``
        : html`<p class="notice" role="status" id="rolled">${t('rolledNotice', {
            key: replaced.accessKey,
            time: dateTime(ctx.lang, replaced.disableAt),
          })}</p>`;
    return ctx.page(reply, {
      title: t('createdTitle'),
      section: 'keys',
      body: html`<h1>${t('createdTitle')}</h1>${rolled}<div class="panel">${secret}
<p>${t('effectLine', { time: dateTime(ctx.lang, key.activeAt) })} ${keyStatus(ctx.lang, key, now)}</p>
<p><a class="button secondary" href="${keyPath(key.accessKey)}">${t('view')}</a> <a href="/console/keys">${t('backToKeys')}</a></p></div>`,
    });
  });

  router.get('/console/keys/:accessKey', async (ctx, request, reply) => {
    const { accessKey = '' } = request.params as { accessKey?: string };
    const key = await deps.merchants.findApiKey(ctx.merchantId, accessKey);
    if (key === undefined) return ctx.notFound(reply);
    return keyPage(ctx, reply, deps, key, { done: queryParam(request, 'done') });
  });

  router.post('/console/keys/:accessKey', async (ctx, request, reply) => {
    const { accessKey = '' } = request.params as { accessKey?: string };
    const key = await deps.merchants.findApiKey(ctx.merchantId, accessKey);
    if (key === undefined) return ctx.notFound(reply);
    const values = readForm(request);
    const parsed = settingsOf(values, ctx.lang);
    if ('error' in parsed) return keyPage(ctx, reply, deps, key, { status: 400, values, errors: [parsed.error] });
    try {
      await deps.merchants.editApiKey(ctx.merchantId, accessKey, parsed.settings);
    } catch (error) {
      if (error instanceof OperatorError) return whenChangeRefused(ctx, reply, deps, accessKey, error);
      return keyPage(ctx, reply, deps, key, { status: 400, values, errors: [fieldErrorOf(error, ctx.lang)] });
    }
    return seeOther(reply, `${keyPath(accessKey)}?done=saved`);
  });

  // A key roll: the new key's secret is shown once through the same POST, 303, GET as a creation.
  router.post('/console/keys/:accessKey/roll', async (ctx, request, reply) => {
    const t = translator('console.keys', ctx.lang);
    const { accessKey = '' } = request.params as { accessKey?: string };
    const key = await deps.merchants.findApiKey(ctx.merchantId, accessKey);
    if (key === undefined) return ctx.notFound(reply);
    const overlapMs = Number(formOf(request).get('overlap') ?? '');
    if (
      !ROLL_OVERLAPS.some((o) => o.ms === overlapMs) ||
      overlapMs < ROLL_OVERLAP_MIN_MS ||
      overlapMs > ROLL_OVERLAP_MAX_MS
    )
      return keyPage(ctx, reply, deps, key, { status: 400, errors: [{ field: 'overlap', message: t('overlapBad') }] });
    if (key.status !== 'active' || key.disableAt !== null)
      return keyPage(ctx, reply, deps, key, {
        status: 409,
        errors: [{ field: 'roll', message: t('rollNotActive') }],
      });
    let rolled;
    try {
      rolled = await deps.merchants.rollApiKey(ctx.merchantId, accessKey, overlapMs);
    } catch (error) {
      if (error instanceof OperatorError) return whenChangeRefused(ctx, reply, deps, accessKey, error);
      if (error instanceof ApiError)
        return keyPage(ctx, reply, deps, key, {
          status: 409,
          errors: [{ field: 'roll', message: t('rollNotActive') }],
        });
      throw error;
    }
    await deps.accounts.holdCreatedKey(ctx.session, rolled.accessKey, rolled.secretKey, CREATED_SECRET_TTL_MS);
    return seeOther(reply, `${keyPath(rolled.accessKey)}/created`);
  });

  router.post('/console/keys/:accessKey/delete', async (ctx, request, reply) => {
    const { accessKey = '' } = request.params as { accessKey?: string };
    try {
      await deps.merchants.deleteApiKey(ctx.merchantId, accessKey);
    } catch (error) {
      return whenChangeRefused(ctx, reply, deps, accessKey, error);
    }
    return seeOther(reply, `/console/keys?deleted=${encodeURIComponent(accessKey)}`);
  });

  router.post('/console/keys/:accessKey/enabled', async (ctx, request, reply) => {
    const { accessKey = '' } = request.params as { accessKey?: string };
    const value = formOf(request).get('enabled');
    const key = await deps.merchants.findApiKey(ctx.merchantId, accessKey);
    if (key === undefined) return ctx.notFound(reply);
    if (value !== '1' && value !== '0') {
      const message = describeFailure(
        { kind: 'invalid_field', field: 'enabled', rule: { rule: 'oneOf', allowed: ['1', '0'] } },
        ctx.lang,
      ).text;
      return keyPage(ctx, reply, deps, key, { status: 400, errors: [{ field: 'enabled', message }] });
    }
    try {
      await deps.merchants.setApiKeyEnabled(ctx.merchantId, accessKey, value === '1');
    } catch (error) {
      return whenChangeRefused(ctx, reply, deps, accessKey, error);
    }
    const rollCancelled = value === '1' && key.status === 'active' && key.disableAt !== null;
    return seeOther(
      reply,
      `${keyPath(accessKey)}?done=${rollCancelled ? 'rollCancelled' : value === '1' ? 'enabled' : 'disabled'}`,
    );
  });
}
