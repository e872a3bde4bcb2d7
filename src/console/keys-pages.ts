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
import { consoleTexts, dateTime, translate, type Translator } from './i18n.js';
import type { ConsoleServices } from './plugin.js';
import { formOf, queryParam, seeOther, type ConsoleContext, type ConsoleRouter } from './router.js';

/** The admin API's limit on a key's label. */
export const LABEL_MAX = 100;

const TEXTS = consoleTexts('keys', {
  title: ['API keys', 'Chaves de API', 'Claves de API'],
  lead: [
    'Your integration signs each request with an access key and its secret key. A new or edited key takes effect after a short activation delay.',
    'A sua integração assina cada requisição com uma access key e a sua secret key. Uma chave nova ou editada passa a valer após um curto atraso de ativação.',
    'Tu integración firma cada solicitud con una access key y su secret key. Una clave nueva o editada entra en vigor tras un breve retraso de activación.',
  ],
  yourKeys: ['Your keys', 'Suas chaves', 'Tus claves'],
  noKeys: [
    'You have no API key yet. Create one below.',
    'Você ainda não tem chave de API. Crie uma abaixo.',
    'Aún no tienes claves de API. Crea una abajo.',
  ],
  accessKey: ['Access key', 'Access key', 'Access key'],
  secretKey: ['Secret key', 'Secret key', 'Secret key'],
  label: ['Label', 'Rótulo', 'Etiqueta'],
  labelHint: [
    'Only for you, to tell your keys apart (at most {max} characters).',
    'Só para você distinguir as suas chaves (no máximo {max} caracteres).',
    'Solo para ti, para distinguir tus claves (como máximo {max} caracteres).',
  ],
  permissions: ['Permissions', 'Permissões', 'Permisos'],
  permissionsHint: [
    'Choose at least one; "all" grants every permission.',
    'Escolha pelo menos uma; "all" concede todas as permissões.',
    'Elige al menos uno; "all" concede todos los permisos.',
  ],
  ipWhitelist: ['IP whitelist', 'Lista de IPs permitidos', 'Lista blanca de IP'],
  ipWhitelistHint: [
    'Addresses or CIDR ranges your servers call from, separated by commas. 0.0.0.0 means any address.',
    'Endereços ou faixas CIDR de onde os seus servidores chamam, separados por vírgulas. 0.0.0.0 significa qualquer endereço.',
    'Direcciones o rangos CIDR desde los que llaman tus servidores, separados por comas. 0.0.0.0 significa cualquier dirección.',
  ],
  debug: ['Debug mode', 'Modo de depuração', 'Modo de depuración'],
  debugHint: [
    'Errors carry a detailed message and the address of their entry in the request log. Turn it off in production.',
    'Os erros trazem uma mensagem detalhada e o endereço do registro no log de requisições. Desative em produção.',
    'Los errores llevan un mensaje detallado y la dirección de su entrada en el registro de solicitudes. Desactívalo en producción.',
  ],
  on: ['on', 'ativado', 'activado'],
  off: ['off', 'desativado', 'desactivado'],
  status: ['Status', 'Situação', 'Estado'],
  created: ['Created', 'Criada', 'Creada'],
  updated: ['Last changed', 'Última alteração', 'Último cambio'],
  activeAt: ['Takes effect', 'Passa a valer', 'Entra en vigor'],
  actions: ['Actions', 'Ações', 'Acciones'],
  view: ['View or edit', 'Ver ou editar', 'Ver o editar'],
  active: ['active', 'ativa', 'activa'],
  disabled: ['disabled', 'desativada', 'desactivada'],
  deleted: ['deleted', 'excluída', 'eliminada'],
  takesEffectIn: ['takes effect in {s} s', 'passa a valer em {s} s', 'entra en vigor en {s} s'],
  createTitle: ['Create a key', 'Criar uma chave', 'Crear una clave'],
  create: ['Create key', 'Criar chave', 'Crear clave'],
  labelTooLong: [
    'Label: at most {max} characters.',
    'Rótulo: no máximo {max} caracteres.',
    'Etiqueta: como máximo {max} caracteres.',
  ],
  createdTitle: ['Your new API key', 'Sua nova chave de API', 'Tu nueva clave de API'],
  secretWarning: [
    'Copy the secret key now and keep it somewhere safe: it is shown only this once and cannot be shown again. If you lose it, delete this key and create a new one.',
    'Copie a secret key agora e guarde-a em local seguro: ela é mostrada só desta vez e não pode ser exibida de novo. Se a perder, exclua esta chave e crie outra.',
    'Copia la secret key ahora y guárdala en un lugar seguro: se muestra solo esta vez y no se puede volver a mostrar. Si la pierdes, elimina esta clave y crea otra.',
  ],
  shownOnce: [
    'The secret key of this key was shown once, right after it was created, and cannot be shown again. If you did not keep it, delete this key and create a new one.',
    'A secret key desta chave foi mostrada uma única vez, logo após a criação, e não pode ser exibida de novo. Se não a guardou, exclua esta chave e crie outra.',
    'La secret key de esta clave se mostró una sola vez, justo después de crearla, y no se puede volver a mostrar. Si no la guardaste, elimina esta clave y crea otra.',
  ],
  effectLine: [
    'The key takes effect {time}:',
    'A chave passa a valer em {time}:',
    'La clave entra en vigor el {time}:',
  ],
  backToKeys: ['Back to your keys', 'Voltar às suas chaves', 'Volver a tus claves'],
  keyTitle: ['API key {label}', 'Chave de API {label}', 'Clave de API {label}'],
  edit: ['Edit', 'Editar', 'Editar'],
  editRestarts: [
    'Saving restarts the activation delay: until it ends, requests signed with this key are refused (code 301).',
    'Salvar reinicia o atraso de ativação: até ele terminar, as requisições assinadas com esta chave são recusadas (código 301).',
    'Guardar reinicia el retraso de activación: hasta que termine, las solicitudes firmadas con esta clave se rechazan (código 301).',
  ],
  save: ['Save', 'Salvar', 'Guardar'],
  saved: [
    'Saved. The activation delay restarted: the changes take effect in {s} s.',
    'Salvo. O atraso de ativação recomeçou: as alterações passam a valer em {s} s.',
    'Guardado. El retraso de activación se reinició: los cambios entran en vigor en {s} s.',
  ],
  savedActive: [
    'Saved. The changes are in effect.',
    'Salvo. As alterações já valem.',
    'Guardado. Los cambios ya están en vigor.',
  ],
  enabledNotice: ['The key is enabled again.', 'A chave foi reativada.', 'La clave se activó de nuevo.'],
  disabledNotice: [
    'The key is disabled: requests signed with it are refused.',
    'A chave foi desativada: as requisições assinadas com ela são recusadas.',
    'La clave se desactivó: las solicitudes firmadas con ella se rechazan.',
  ],
  deletedNotice: [
    'The key {key} was deleted. It will never work again.',
    'A chave {key} foi excluída. Ela nunca mais funcionará.',
    'La clave {key} se eliminó. No volverá a funcionar.',
  ],
  stateTitle: ['Disable or enable', 'Desativar ou ativar', 'Desactivar o activar'],
  disableText: [
    'Disabling takes effect at once; enabling again waits the activation delay.',
    'Desativar vale na hora; reativar aguarda o atraso de ativação.',
    'Desactivar surte efecto al instante; activar de nuevo espera el retraso de activación.',
  ],
  disable: ['Disable key', 'Desativar chave', 'Desactivar clave'],
  enable: ['Enable key', 'Ativar chave', 'Activar clave'],
  deleteTitle: ['Delete', 'Excluir', 'Eliminar'],
  deleteText: [
    'Deleting is final: requests signed with this key are refused from now on, and it cannot be restored.',
    'A exclusão é definitiva: as requisições assinadas com esta chave passam a ser recusadas e ela não pode ser restaurada.',
    'Eliminar es definitivo: las solicitudes firmadas con esta clave se rechazan desde ahora y no se puede restaurar.',
  ],
  deleteConfirm: [
    'Delete this API key for good?',
    'Excluir esta chave de API definitivamente?',
    '¿Eliminar esta clave de API para siempre?',
  ],
  delete: ['Delete key', 'Excluir chave', 'Eliminar clave'],
  deletedText: [
    'This key was deleted and cannot change any more.',
    'Esta chave foi excluída e não pode mais ser alterada.',
    'Esta clave se eliminó y ya no puede cambiar.',
  ],
  noLabel: ['(no label)', '(sem rótulo)', '(sin etiqueta)'],
  lastUsed: ['Last used', 'Último uso', 'Último uso'],
  never: ['never', 'nunca', 'nunca'],
  lastUsedNote: [
    'Last used is the last request to the API that the key signed and that was accepted. It is written at most once every {minutes} minutes per key, so it may be up to {minutes} minutes earlier than the latest request.',
    'Último uso é a última requisição à API assinada com a chave e aceita. Ele é gravado no máximo uma vez a cada {minutes} minutos por chave, então pode ser até {minutes} minutos anterior à requisição mais recente.',
    'Último uso es la última solicitud a la API firmada con la clave y aceptada. Se guarda como mucho una vez cada {minutes} minutos por clave, así que puede ser hasta {minutes} minutos anterior a la solicitud más reciente.',
  ],
  pending: ['pending', 'pendente', 'pendiente'],
  pendingUntil: ['until {time}', 'até {time}', 'hasta {time}'],
  stopsAt: ['stops {time}', 'para em {time}', 'se detiene el {time}'],
  replacedBy: ['Replaced by', 'Substituída por', 'Reemplazada por'],
  disableAt: ['Scheduled to stop', 'Programada para parar', 'Programada para detenerse'],
  rollTitle: ['Roll this key', 'Trocar esta chave', 'Rotar esta clave'],
  rollText: [
    'Creates a new key with the same label, permissions, IP whitelist and debug mode, and schedules this key to stop after an overlap you choose. The new key takes effect after the activation delay; during the overlap both keys work, so you can move your servers to the new key. This key stops at the end of the overlap, even if nothing else runs.',
    'Cria uma chave nova com o mesmo rótulo, permissões, lista de IPs e modo de depuração, e programa esta chave para parar após uma sobreposição que você escolhe. A chave nova passa a valer após o atraso de ativação; durante a sobreposição as duas funcionam, para você trocar a chave nos seus servidores. Esta chave para ao fim da sobreposição, mesmo que nada mais rode.',
    'Crea una clave nueva con la misma etiqueta, permisos, lista blanca de IP y modo de depuración, y programa esta clave para detenerse tras un solapamiento que eliges. La clave nueva entra en vigor tras el retraso de activación; durante el solapamiento funcionan las dos, para que cambies la clave en tus servidores. Esta clave se detiene al final del solapamiento, aunque no se ejecute nada más.',
  ],
  overlap: [
    'Overlap (both keys work)',
    'Sobreposição (as duas chaves funcionam)',
    'Solapamiento (las dos claves funcionan)',
  ],
  overlap15m: ['15 minutes', '15 minutos', '15 minutos'],
  overlap1h: ['1 hour', '1 hora', '1 hora'],
  overlap1d: ['1 day', '1 dia', '1 día'],
  overlap7d: ['7 days', '7 dias', '7 días'],
  overlapBad: [
    'Overlap: choose 15 minutes, 1 hour, 1 day or 7 days.',
    'Sobreposição: escolha 15 minutos, 1 hora, 1 dia ou 7 dias.',
    'Solapamiento: elige 15 minutos, 1 hora, 1 día o 7 días.',
  ],
  roll: [
    'Create the new key and schedule this one to stop',
    'Criar a chave nova e programar a parada desta',
    'Crear la clave nueva y programar la parada de esta',
  ],
  rollConfirm: [
    'Create a new key and schedule this key to stop after the overlap?',
    'Criar uma chave nova e programar a parada desta chave após a sobreposição?',
    '¿Crear una clave nueva y programar la parada de esta clave tras el solapamiento?',
  ],
  rollNotActive: [
    'Only an active key that is not already being replaced can be rolled.',
    'Só uma chave ativa que ainda não está sendo substituída pode ser trocada.',
    'Solo se puede rotar una clave activa que no se esté reemplazando ya.',
  ],
  cancelRoll: [
    'Keep this key (cancel the stop)',
    'Manter esta chave (cancelar a parada)',
    'Conservar esta clave (cancelar la detención)',
  ],
  cancelRollText: [
    'Changed your mind, or deleted the new key by mistake? Keeping this key cancels its scheduled stop at once, with no new activation delay; the new key stays as it is.',
    'Mudou de ideia, ou excluiu a nova chave por engano? Manter esta chave cancela a parada programada na hora, sem novo prazo de ativação; a nova chave continua como está.',
    '¿Cambiaste de idea o eliminaste la clave nueva por error? Conservar esta clave cancela su detención programada al instante, sin nuevo plazo de activación; la clave nueva sigue como está.',
  ],
  rollCancelledNotice: [
    'The scheduled stop is cancelled: this key keeps working.',
    'A parada programada foi cancelada: esta chave continua funcionando.',
    'La detención programada se canceló: esta clave sigue funcionando.',
  ],
  rolling: [
    'This key is being replaced by {key}: it stops {time}. Until then both keys work.',
    'Esta chave está sendo substituída por {key}: ela para em {time}. Até lá as duas chaves funcionam.',
    'Esta clave se está reemplazando por {key}: se detiene el {time}. Hasta entonces funcionan las dos.',
  ],
  rolledNotice: [
    'This key replaces {key}, which stops {time}. Until then both keys work: move your servers to this key.',
    'Esta chave substitui {key}, que para em {time}. Até lá as duas chaves funcionam: troque a chave nos seus servidores.',
    'Esta clave reemplaza a {key}, que se detiene el {time}. Hasta entonces funcionan las dos: cambia la clave en tus servidores.',
  ],
});

type T = Translator<keyof typeof TEXTS>;

/** What each permission lets a key do, in words: [short name, what it allows]. */
const PERMISSION_TEXTS = consoleTexts('permissions', {
  exchange: ['Exchange', 'Câmbio', 'Cambio'],
  'exchange.does': [
    'Create fiat ↔ USDT exchange orders (reading them back needs "query").',
    'Criar pedidos de câmbio moeda ↔ USDT (consultá-los exige "query").',
    'Crear pedidos de cambio fiat ↔ USDT (consultarlos requiere "query").',
  ],
  'ken.collection': ['Kenya collections', 'Recebimentos no Quênia', 'Cobros en Kenia'],
  'ken.collection.does': [
    'Ask payers in Kenya to pay by M-Pesa (collection orders).',
    'Pedir pagamentos por M-Pesa a pagadores no Quênia (pedidos de recebimento).',
    'Pedir pagos por M-Pesa a pagadores en Kenia (pedidos de cobro).',
  ],
  'ken.transfer': ['Kenya transfers', 'Transferências no Quênia', 'Transferencias en Kenia'],
  'ken.transfer.does': [
    'Send money out in Kenya (M-Pesa and bank transfers) from your balance.',
    'Enviar dinheiro no Quênia (M-Pesa e transferências bancárias) a partir do seu saldo.',
    'Enviar dinero en Kenia (M-Pesa y transferencias bancarias) desde tu saldo.',
  ],
  'bra.collection': ['Brazil collections', 'Recebimentos no Brasil', 'Cobros en Brasil'],
  'bra.collection.does': [
    'Ask payers in Brazil to pay by Pix (collection orders).',
    'Pedir pagamentos por Pix a pagadores no Brasil (pedidos de recebimento).',
    'Pedir pagos por Pix a pagadores en Brasil (pedidos de cobro).',
  ],
  'bra.transfer': ['Brazil transfers', 'Transferências no Brasil', 'Transferencias en Brasil'],
  'bra.transfer.does': [
    'Send money out in Brazil (Pix and bank transfers) from your balance.',
    'Enviar dinheiro no Brasil (Pix e transferências bancárias) a partir do seu saldo.',
    'Enviar dinero en Brasil (Pix y transferencias bancarias) desde tu saldo.',
  ],
  polymerize: ['Aggregate cashier', 'Caixa agregado', 'Caja agregada'],
  'polymerize.does': [
    'Open a payment page where the payer chooses how to pay.',
    'Abrir uma página de pagamento em que o pagador escolhe como pagar.',
    'Abrir una página de pago donde el pagador elige cómo pagar.',
  ],
  query: ['Queries', 'Consultas', 'Consultas'],
  'query.does': [
    'Read orders, their vouchers and the list of banks.',
    'Consultar pedidos, os seus comprovantes e a lista de bancos.',
    'Consultar pedidos, sus comprobantes y la lista de bancos.',
  ],
  balance: ['Balances', 'Saldos', 'Saldos'],
  'balance.does': ['Read your balances.', 'Consultar os seus saldos.', 'Consultar tus saldos.'],
  all: ['Everything', 'Tudo', 'Todo'],
  'all.does': [
    'Every permission above, and any added later.',
    'Todas as permissões acima, e as que forem adicionadas depois.',
    'Todos los permisos de arriba, y los que se añadan después.',
  ],
});

type PermissionText = keyof typeof PERMISSION_TEXTS;

/** A permission's short name in words ("Brazil collections"). */
export function permissionName(lang: Language, permission: string): string {
  return permission in PERMISSION_TEXTS ? translate(PERMISSION_TEXTS, lang)(permission as PermissionText) : permission;
}

/** What a permission lets a key do, in words. */
export function permissionDoes(lang: Language, permission: string): string {
  const key = `${permission}.does`;
  return key in PERMISSION_TEXTS ? translate(PERMISSION_TEXTS, lang)(key as PermissionText) : '';
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
  const t = translate(TEXTS, lang);
  return html`<span class="badge wait" data-until="${activeAt}" data-template="${t('takesEffectIn', { s: '{s}' })}" data-over="${t('active')}" data-over-class="badge ok">${t('takesEffectIn', { s: secondsUntil(activeAt, now) })}</span>`;
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
  const t = translate(TEXTS, lang);
  if (key.status === 'deleted') return badge(t('deleted'));
  if (key.status === 'disabled') return badge(t('disabled'), 'bad');
  const stops =
    key.disableAt === undefined || key.disableAt === null
      ? html``
      : html` <span class="when">${t('stopsAt', { time: dateTime(lang, key.disableAt) })}</span>`;
  return key.activeAt > now
    ? html`<span class="when">${t('pending')} ${t('pendingUntil', { time: dateTime(lang, key.activeAt) })}</span> ${activationCountdown(lang, key.activeAt, now)}${stops}`
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
  return html`${textField({ name: 'label', label: t('label'), value: values.label, hint: t('labelHint', { max: LABEL_MAX }), maxlength: LABEL_MAX, errors })}
<fieldset id="permissions" aria-describedby="permissions-hint${permissionError !== undefined ? ' permissions-error' : ''}"><legend>${t('permissions')}</legend>
<p class="muted" id="permissions-hint">${t('permissionsHint')}</p>${permissionError !== undefined ? html`<p class="error" id="permissions-error">${permissionError.message}</p>` : ''}
<div class="checks wide">${PERMISSION_GRANTS.map(
    (p) =>
      html`<div class="perm"><label class="check"><input type="checkbox" name="permissions" value="${p}" aria-describedby="perm-${p}-does"${values.permissions.includes(p) ? html` checked` : ''}${
        permissionError !== undefined ? html` aria-invalid="true"` : ''
      }> <span class="mono">${p}</span></label><p class="muted" id="perm-${p}-does">${permissionName(lang, p)}: ${permissionDoes(lang, p)}</p></div>`,
  )}</div></fieldset>
${textField({ name: 'ipWhitelist', label: t('ipWhitelist'), value: values.ipWhitelist, hint: t('ipWhitelistHint'), errors })}
<label class="check"><input type="checkbox" id="debug" name="debug" value="1" aria-describedby="debug-hint"${values.debug ? html` checked` : ''}> ${t('debug')}</label>
<p class="muted" id="debug-hint">${t('debugHint')}</p>`;
}

function createForm(ctx: ConsoleContext, t: T, values: KeyFormValues, errors: readonly FieldError[]): Html {
  return html`<div class="panel" id="create"><h2>${t('createTitle')}</h2>${errorSummary(ctx.lang, errors)}
<form method="post" action="/console/keys" novalidate>${ctx.csrf}${keyFields(t, ctx.lang, values, errors)}<button type="submit">${t('create')}</button></form></div>`;
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
  const t = translate(TEXTS, ctx.lang);
  const keys = await allApiKeys(deps, ctx.merchantId);
  const now = deps.clock.now();
  const rows = keys.map((k, i) => {
    const copyId = `key-${i}`;
    const live = k.status !== 'deleted';
    return html`<tr><td><code id="${copyId}">${k.accessKey}</code>${live ? copyButton(copyId, ctx.lang) : ''}</td>
<td>${k.label === '' ? html`<span class="muted">${t('noLabel')}</span>` : k.label}</td>
<td>${k.permissions.map((p) => permissionName(ctx.lang, p)).join(', ')}<br><span class="mono muted">${k.permissions.join(', ')}</span></td><td class="mono">${k.ipWhitelist.join(', ')}</td>
<td>${k.debug ? badge(t('on'), 'wait') : t('off')}</td><td>${keyStatus(ctx.lang, k, now)}${
      k.replacedBy !== null && k.status === 'active'
        ? html`<br><span class="muted">${t('replacedBy')} <code>${k.replacedBy}</code></span>`
        : ''
    }</td>
<td>${lastUsed(t, ctx.lang, k)}</td>
<td>${live ? html`<a href="${keyPath(k.accessKey)}">${t('view')}</a>` : '—'}</td></tr>`;
  });
  return ctx.page(reply, {
    status: input.status ?? 200,
    title: t('title'),
    section: 'keys',
    body: html`<h1>${t('title')}</h1>${notice(input.info)}<p>${t('lead')}</p>
<div class="panel"><h2>${t('yourKeys')}</h2>${
      keys.length === 0
        ? html`<p>${t('noKeys')}</p>`
        : html`<div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('accessKey')}</th><th scope="col">${t('label')}</th><th scope="col">${t('permissions')}</th><th scope="col">${t('ipWhitelist')}</th><th scope="col">${t('debug')}</th><th scope="col">${t('status')}</th><th scope="col">${t('lastUsed')}</th><th scope="col">${t('actions')}</th></tr></thead><tbody>${rows}</tbody></table></div>
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
  const t = translate(TEXTS, ctx.lang);
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
  const forms =
    key.status === 'deleted'
      ? html`<p class="warning">${t('deletedText')}</p>`
      : html`<div class="panel" id="edit"><h2>${t('edit')}</h2>${errorSummary(ctx.lang, errors)}<p class="warning">${t('editRestarts')}</p>
<form method="post" action="${path}" novalidate>${ctx.csrf}${keyFields(t, ctx.lang, input.values ?? valuesOf(key), errors)}<button type="submit">${t('save')}</button></form></div>
${rollPanel(ctx, t, key, errors)}
<div class="panel"><h2>${t('stateTitle')}</h2><p>${t('disableText')}</p><form method="post" action="${path}/enabled">${ctx.csrf}${
          key.status === 'disabled'
            ? html`<input type="hidden" name="enabled" value="1"><button type="submit">${t('enable')}</button>`
            : html`<input type="hidden" name="enabled" value="0"><button type="submit" class="secondary">${t('disable')}</button>`
        }</form></div>
<div class="panel"><h2>${t('deleteTitle')}</h2><p>${t('deleteText')}</p><form method="post" action="${path}/delete" data-confirm="${t('deleteConfirm')}">${ctx.csrf}<button type="submit" class="danger">${t('delete')}</button></form></div>`;
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
    })}</p><p>${t('cancelRollText')}</p><form method="post" action="${path}/enabled">${ctx.csrf}<input type="hidden" name="enabled" value="1"><button type="submit" class="secondary">${t('cancelRoll')}</button></form></div>`;
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
    const t = translate(TEXTS, ctx.lang);
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
    const t = translate(TEXTS, ctx.lang);
    const { accessKey = '' } = request.params as { accessKey?: string };
    const key = await deps.merchants.findApiKey(ctx.merchantId, accessKey);
    if (key === undefined) return ctx.notFound(reply);
    const secretKey = await deps.accounts.takeCreatedKey(ctx.session, key.accessKey);
    const now = deps.clock.now();
    void reply.header('cache-control', 'no-store');
    const secret =
      secretKey !== undefined && key.status !== 'deleted'
        ? html`<p class="warning" role="alert">${t('secretWarning')}</p>
<label for="new-access-key">${t('accessKey')}</label><input type="text" readonly class="secret" id="new-access-key" value="${key.accessKey}"> ${copyButton('new-access-key', ctx.lang)}
<label for="new-secret-key">${t('secretKey')}</label><input type="text" readonly class="secret" id="new-secret-key" value="${secretKey}" autocomplete="off"> ${copyButton('new-secret-key', ctx.lang)}`
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
    const t = translate(TEXTS, ctx.lang);
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
