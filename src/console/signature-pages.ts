/**
 * The signature tool: the merchant pastes a request's body (or query string), picks a key whose
 * whitelist is 0.0.0.0, and sees the exact string to sign, the resulting `sign` and the headers to
 * send, all computed by the one signing module the server itself uses. Nothing is stored.
 */
import type { Language } from '../http/language.js';
import { HEADER_FORMATS } from '../auth/plugin.js';
import { randomUUID } from 'node:crypto';
import { signString, signsEqual, stringToSign } from '@cashgate/sdk';
import type { FastifyReply } from 'fastify';
import { bodyProblem } from '../http/body-check.js';
import { describeFailure } from '../http/failures.js';
import { html, type Html } from '../http/html.js';
import type { ApiKeyView } from '../merchants/service.js';
import { badge, copyButton, errorSummary, textField, type FieldError } from './forms.js';
import { translator, type Translator } from '../i18n/messages.js';
import type { ConsoleServices } from './plugin.js';
import { formOf, type ConsoleContext, type ConsoleRouter } from './router.js';

type T = Translator<'console.signature'>;

const WHITELIST_ANY = '0.0.0.0';

interface ToolValues {
  method: 'POST' | 'GET';
  params: string;
  accessKey: string;
  timestamp: string;
  nonce: string;
  sign: string;
}

interface ToolResult {
  signed: string;
  sign: string;
  headers: [string, string][];
  matches: boolean | undefined;
}

/** The merchant's keys the tool may use: active, in effect, whitelist exactly 0.0.0.0. */
async function usableKeys(ctx: ConsoleContext, deps: ConsoleServices): Promise<ApiKeyView[]> {
  const now = deps.clock.now();
  return (await deps.merchants.listApiKeys(ctx.merchantId)).filter(
    (k) =>
      k.status === 'active' && k.activeAt <= now && k.ipWhitelist.length === 1 && k.ipWhitelist[0] === WHITELIST_ANY,
  );
}

/** The top-level members of a POST body, or the parameters of a GET query string. */
function parseParams(
  t: T,
  lang: Language,
  method: 'POST' | 'GET',
  text: string,
): { params: Record<string, unknown> | null } | { error: string } {
  if (method === 'POST') {
    if (text.trim() === '') return { params: null };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return { error: t('jsonInvalid', { detail: error instanceof Error ? error.message : String(error) }) };
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: t('jsonNotObject') };
    // The server refuses these before checking a signature: the tool says why instead of signing.
    const problem = bodyProblem(value);
    if (problem !== undefined) return { error: describeFailure(problem, lang).text };
    return { params: value as Record<string, unknown> };
  }
  const query = text.trim().replace(/^\?/, '');
  const params: Record<string, string> = {};
  if (query === '') return { params };
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const [rawName, rawValue] = eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    } catch {
      return { error: t('queryBad', { detail: t('queryEscape') }) };
    }
    if (Object.hasOwn(params, name)) return { error: t('queryBad', { detail: t('queryDuplicate', { name }) }) };
    params[name] = value;
  }
  return { params };
}

function toolForm(
  ctx: ConsoleContext,
  t: T,
  keys: ApiKeyView[],
  values: ToolValues,
  errors: readonly FieldError[],
): Html {
  const errorOf = (field: string): FieldError | undefined => errors.find((e) => e.field === field);
  const paramsError = errorOf('params');
  const keyError = errorOf('accessKey');
  const methodError = errorOf('method');
  const keyOptions =
    keys.some((k) => k.accessKey === values.accessKey) || values.accessKey === ''
      ? keys.map((k) => k.accessKey)
      : [values.accessKey, ...keys.map((k) => k.accessKey)];
  const labelOf = (accessKey: string): string => {
    const key = keys.find((k) => k.accessKey === accessKey);
    return key === undefined || key.label === '' ? accessKey : `${key.label} · ${accessKey}`;
  };
  return html`<div class="panel">${errorSummary(ctx.lang, errors)}
${keys.length === 0 ? html`<p class="warning">${t('noKey')} <a href="/console/keys">${t('goToKeys')}</a></p>` : ''}
<form method="post" action="/console/signature" novalidate>${ctx.csrf}
<label for="method">${t('method')}</label>${methodError !== undefined ? html`<p class="error" id="method-error">${methodError.message}</p>` : ''}
<select id="method" name="method"${
    methodError !== undefined ? html` aria-invalid="true" aria-describedby="method-error"` : ''
  }><option value="POST"${values.method === 'POST' ? html` selected` : ''}>${t('post')}</option><option
value="GET"${values.method === 'GET' ? html` selected` : ''}>${t('get')}</option></select>
<label for="params">${t('params')}</label><p class="muted" id="params-hint">${t('paramsHint')}</p>${
    paramsError !== undefined ? html`<p class="error" id="params-error">${paramsError.message}</p>` : ''
  }
<textarea id="params" name="params" spellcheck="false"
aria-describedby="params-hint${paramsError !== undefined ? ' params-error' : ''}"${
    paramsError !== undefined ? html` aria-invalid="true"` : ''
  }>${values.params}</textarea>
<label for="accessKey">${t('accessKey')}</label>${keyError !== undefined ? html`<p class="error" id="accessKey-error">${keyError.message}</p>` : ''}
<select id="accessKey" name="accessKey"${keyError !== undefined ? html` aria-invalid="true" aria-describedby="accessKey-error"` : ''}>${keyOptions.map(
    (k) => html`<option value="${k}"${k === values.accessKey ? html` selected` : ''}>${labelOf(k)}</option>`,
  )}</select>
${textField({ name: 'timestamp', label: t('timestamp'), value: values.timestamp, hint: t('timestampHint'), inputmode: 'numeric', maxlength: 13, errors })}
${textField({ name: 'nonce', label: t('nonce'), value: values.nonce, hint: t('nonceHint'), maxlength: 36, errors })}
${textField({ name: 'sign', label: t('sign'), value: values.sign, hint: t('signHint'), maxlength: 28, errors })}
<button type="submit">${t('compute')}</button></form></div>`;
}

function resultPanel(t: T, lang: Language, result: ToolResult): Html {
  const headers = result.headers.map(([name, value]) => `${name}: ${value}`).join('\n');
  return html`<div class="panel" id="result"><h2>${t('result')}</h2>
<h3>${t('stringToSign')}</h3><pre id="string-to-sign">${result.signed}</pre>${copyButton('string-to-sign', lang)}
<h3>${t('signResult')}</h3><p><code id="computed-sign">${result.sign}</code> ${copyButton('computed-sign', lang)}</p>
${result.matches === undefined ? '' : result.matches ? html`<p>${badge(t('matches'), 'ok')}</p>` : html`<p class="warning">${badge(t('differs'), 'bad')}</p>`}
<h3>${t('headers')}</h3><pre id="signed-headers">${headers}</pre>${copyButton('signed-headers', lang)}</div>`;
}

function toolPage(
  ctx: ConsoleContext,
  reply: FastifyReply,
  input: { status?: number; keys: ApiKeyView[]; values: ToolValues; errors?: FieldError[]; result?: ToolResult },
): FastifyReply {
  const t = translator('console.signature', ctx.lang);
  void reply.header('cache-control', 'no-store');
  return ctx.page(reply, {
    status: input.status ?? 200,
    title: t('title'),
    section: 'signature',
    body: html`<h1>${t('title')}</h1><p>${t('lead')}</p><p class="warning">${t('keyRule')}</p><p class="muted">${t('nothingStored')}</p>
${input.result !== undefined ? resultPanel(t, ctx.lang, input.result) : ''}${toolForm(ctx, t, input.keys, input.values, input.errors ?? [])}`,
  });
}

/** The console's pages for the signature tool. */
export function registerSignaturePages(router: ConsoleRouter, deps: ConsoleServices): void {
  router.get('/console/signature', async (ctx, _request, reply) => {
    const keys = await usableKeys(ctx, deps);
    return toolPage(ctx, reply, {
      keys,
      values: {
        method: 'POST',
        params: '',
        accessKey: keys[0]?.accessKey ?? '',
        timestamp: String(deps.clock.now()),
        nonce: randomUUID(),
        sign: '',
      },
    });
  });

  router.post('/console/signature', async (ctx, request, reply) => {
    const t = translator('console.signature', ctx.lang);
    const form = formOf(request);
    const rawMethod = form.get('method') ?? 'POST';
    const values: ToolValues = {
      method: rawMethod === 'GET' ? 'GET' : 'POST',
      params: form.get('params') ?? '',
      accessKey: (form.get('accessKey') ?? '').trim(),
      timestamp: (form.get('timestamp') ?? '').trim(),
      nonce: (form.get('nonce') ?? '').trim(),
      sign: (form.get('sign') ?? '').trim(),
    };
    const keys = await usableKeys(ctx, deps);
    const errors: FieldError[] = [];
    if (rawMethod !== 'POST' && rawMethod !== 'GET') errors.push({ field: 'method', message: t('methodBad') });
    const parsed = parseParams(t, ctx.lang, values.method, values.params);
    if ('error' in parsed) errors.push({ field: 'params', message: parsed.error });
    // The key must be one of the merchant's usable keys, and the secret must be the merchant's own.
    const authKey = keys.some((k) => k.accessKey === values.accessKey)
      ? await deps.merchants.findKeyForSigning(values.accessKey)
      : undefined;
    if (authKey === undefined || authKey.merchantId !== ctx.merchantId)
      errors.push({ field: 'accessKey', message: t('keyRefused') });
    const headerRule = (field: 'timestamp' | 'nonce' | 'sign'): FieldError => ({
      field,
      message: describeFailure({ kind: 'header_malformed', header: field, expected: field }, ctx.lang).text,
    });
    if (!HEADER_FORMATS.timestamp.test(values.timestamp)) errors.push(headerRule('timestamp'));
    if (!HEADER_FORMATS.nonce.test(values.nonce)) errors.push(headerRule('nonce'));
    const signMalformed = values.sign !== '' && !HEADER_FORMATS.sign.test(values.sign);
    if (errors.length > 0 || 'error' in parsed || authKey === undefined) {
      if (signMalformed) errors.push(headerRule('sign'));
      return toolPage(ctx, reply, { status: 400, keys, values, errors });
    }

    const headers = { access_key: authKey.accessKey, timestamp: values.timestamp, nonce: values.nonce };
    const signed = stringToSign(parsed.params, headers);
    const sign = signString(authKey.secretKey, signed);
    const result: ToolResult = {
      signed,
      sign,
      headers: [
        ['access_key', headers.access_key],
        ['timestamp', headers.timestamp],
        ['nonce', headers.nonce],
        ['sign', sign],
      ],
      matches: values.sign === '' || signMalformed ? undefined : signsEqual(sign, values.sign),
    };
    // A malformed "your sign" is an error, but everything else is right: the expected sign is shown
    // next to the error (and in the result), so the merchant sees what it should have been.
    if (signMalformed) {
      const rule = headerRule('sign');
      errors.push({ ...rule, message: `${rule.message} ${t('expectedSign', { sign })}` });
      return toolPage(ctx, reply, { status: 400, keys, values, errors, result });
    }
    return toolPage(ctx, reply, { keys, values, result });
  });
}
