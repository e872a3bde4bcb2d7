import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OperatorError } from '../admin/failures.js';
import type { Clock } from '../clock.js';
import { formFields } from '../http/body-check.js';
import { ApiError } from '../http/failures.js';
import type { MerchantService } from '../merchants/service.js';
import type { OrderRow } from '../orders/queries.js';
import type { OrderSandbox } from '../orders/sandbox.js';
import { EventNotAllowedError, type OrderService } from '../orders/service.js';
import { COLLECTION_STATUS } from '../orders/state-machine.js';
import { boletoPayer, type BoletoLive } from '../brazil/boleto-live.js';
import { brazilDetails } from '../brazil/details.js';
import { boletoPdfFactsOf, renderBoletoPdf } from './boleto-pdf.js';
import { payerFormView, readPayerForm, type PayerField } from './boleto-payer.js';
import {
  checkoutCurrency,
  CheckoutExpiredError,
  CheckoutInputError,
  type CheckoutChoice,
  type CheckoutService,
} from './checkout.js';
import { CASHIER_LOCALES, PAGE_LANGUAGES, pickLanguage, cashierTranslator } from './i18n.js';
import { sendPage } from './layout.js';
import {
  checkoutExpiredView,
  checkoutView,
  countryOf,
  finalView,
  MPESA_RESEND_COOLDOWN_MS,
  MPESA_RESEND_LIMIT,
  notFoundView,
  payPageOf,
  pendingView,
  type CashierState,
  type ViewContext,
} from './views.js';

export interface CashierPageDeps {
  orders: OrderService;
  sandbox: OrderSandbox;
  checkouts: CheckoutService;
  merchants: MerchantService;
  clock: Clock;
  /** The Pix recipient (the BR Code's merchant name) and the bank that issues boletos. */
  pix: { key: string; merchantName: string; merchantCity: string };
  boletoBankCode: string;
  /** Boletos registered at an issuer (BRAZIL_BOLETO_RAIL=efi|inter): their payer form and the issuer's PDF. */
  boleto?: BoletoLive | undefined;
}

/** A waiting page reloads itself this often when the browser runs no script. */
const RELOAD_WITHOUT_SCRIPT_SECONDS = 10;

/** What a cashier page shows of its order now: a pending order whose time ran out is shown expired. */
export function cashierState(order: OrderRow, now: number): CashierState {
  if (order.status === COLLECTION_STATUS.paid) return 'paid';
  if (order.status === COLLECTION_STATUS.cancelled) return 'cancelled';
  if (order.status === COLLECTION_STATUS.expired || (order.cashier_expire_at ?? 0) <= now) return 'expired';
  return 'pending';
}

const HTTP_STATUS: Record<CashierState, number> = { pending: 200, paid: 200, expired: 410, cancelled: 410 };

type CashierRequest = FastifyRequest<{
  Params: { cashierId: string };
  Querystring: Record<string, string | undefined>;
}>;

/**
 * The payer's pages: the cashier of each collection (`/cashier/{cashierId}`: M-Pesa, Pix, boleto,
 * USDT), its status for the page's poll, its boleto PDF, its M-Pesa resend and sandbox controls; and
 * the aggregate cashier (`/checkout/{id}`), whose form makes the order and sends the payer to its page.
 */
export async function registerCashierPages(parent: FastifyInstance, deps: CashierPageDeps): Promise<void> {
  await parent.register(async (app) => cashierScope(app, deps));
}

function cashierScope(app: FastifyInstance, deps: CashierPageDeps): void {
  // The pages' forms post url-encoded bodies, and nothing else is taken here (JSON and the rest: 415).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 2048 },
    (_request, body, done) => {
      const form = formFields(String(body));
      return form instanceof ApiError ? done(form, undefined) : done(null, Object.fromEntries(form));
    },
  );
  /** The form's fields as text (a field sent twice keeps its last value). */
  const formOf = (request: FastifyRequest): Record<string, string | undefined> =>
    (request.body as Record<string, string> | undefined) ?? {};
  /** `?lang=` carried over to a redirect, when it names one of the cashier's languages. */
  const langSuffix = (request: FastifyRequest<{ Querystring: Record<string, string | undefined> }>) => {
    const lang = request.query.lang;
    return lang !== undefined && (CASHIER_LOCALES as readonly string[]).includes(lang)
      ? `?lang=${encodeURIComponent(lang)}`
      : '';
  };

  const languageOf = (request: FastifyRequest<{ Querystring: Record<string, string | undefined> }>, currency: string) =>
    pickLanguage({ query: request.query.lang, acceptLanguage: request.headers['accept-language'], currency });

  const contextFor = async (request: CashierRequest, order: OrderRow): Promise<ViewContext> => {
    const lang = languageOf(request, order.currency);
    const merchant = await deps.merchants.getMerchant(order.merchant_id);
    return {
      lang,
      t: cashierTranslator(lang),
      now: deps.clock.now(),
      merchantName: merchant.name,
      payeeName: deps.pix.merchantName,
      sandbox: deps.sandbox.enabledFor(order),
      path: `/cashier/${encodeURIComponent(request.params.cashierId)}`,
      langQuery: langSuffix(request),
    };
  };

  const notFound = (
    request: FastifyRequest<{ Querystring: Record<string, string | undefined> }>,
    reply: FastifyReply,
    path: string,
  ) => {
    const lang = languageOf(request, '');
    const t = cashierTranslator(lang);
    return sendPage(reply, 404, { lang, t, path, ...notFoundView(t) });
  };

  /**
   * What the issuer still needs from the payer before it registers the order's boleto (the form
   * asks for it), or undefined when nothing is asked (not a live boleto, or already registered).
   */
  const payerMissing = async (order: OrderRow) => {
    const boleto = deps.boleto;
    if (boleto === undefined || payPageOf(order) !== 'boleto') return undefined;
    if ((await boleto.charge(order.id))?.state !== 'awaiting_payer') return undefined;
    const payer = boletoPayer(brazilDetails(order), boleto.issuer);
    return 'missing' in payer ? payer.missing : undefined;
  };

  const cashierPage = async (
    request: CashierRequest,
    reply: FastifyReply,
    form?: { input: Record<string, string | undefined>; problems: PayerField[] },
  ) => {
    {
      const order = await deps.orders.findByCashier(request.params.cashierId);
      if (order === undefined)
        return notFound(request, reply, `/cashier/${encodeURIComponent(request.params.cashierId)}`);
      const ctx = await contextFor(request, order);
      const state = cashierState(order, ctx.now);
      const data = { 'status-url': `${ctx.path}/status`, state, now: String(ctx.now) };
      const languages = PAGE_LANGUAGES[countryOf(order)];
      if (state === 'pending') {
        const missing = await payerMissing(order);
        const boletoPanel =
          missing === undefined
            ? undefined
            : payerFormView(ctx.t, `${ctx.path}/boleto-payer${ctx.langQuery}`, missing, form?.input, form?.problems);
        const view = pendingView(ctx, order, { sandboxError: request.query.sandbox === 'amount', boletoPanel });
        return sendPage(reply, form === undefined ? 200 : 400, {
          ...ctx,
          ...view,
          data,
          languages,
          reloadWithoutScript: RELOAD_WITHOUT_SCRIPT_SECONDS,
        });
      }
      return sendPage(reply, HTTP_STATUS[state], { ...ctx, ...finalView(ctx, order, state), languages });
    }
  };

  app.get<{ Params: { cashierId: string }; Querystring: Record<string, string | undefined> }>(
    '/cashier/:cashierId',
    (request, reply) => cashierPage(request, reply),
  );

  // The payer gives what the boleto issuer needs (name, CPF or CNPJ, address); the boleto is then issued.
  app.post<{ Params: { cashierId: string }; Querystring: Record<string, string | undefined> }>(
    '/cashier/:cashierId/boleto-payer',
    async (request, reply) => {
      const order = await deps.orders.findByCashier(request.params.cashierId);
      const path = `/cashier/${encodeURIComponent(request.params.cashierId)}`;
      if (order === undefined) return notFound(request, reply, path);
      const missing = cashierState(order, deps.clock.now()) === 'pending' ? await payerMissing(order) : undefined;
      if (missing === undefined || deps.boleto === undefined)
        return reply.redirect(`${path}${langSuffix(request)}`, 303);
      const input = formOf(request);
      const read = readPayerForm(input, missing);
      if ('problems' in read) return cashierPage(request, reply, { input, problems: read.problems });
      await deps.boleto.payerGiven(order.id, read.given);
      return reply.redirect(`${path}${langSuffix(request)}`, 303);
    },
  );

  // The page's poll: a few bytes, never cached.
  app.get<{ Params: { cashierId: string } }>('/cashier/:cashierId/status', async (request, reply) => {
    const order = await deps.orders.findByCashier(request.params.cashierId);
    void reply.header('cache-control', 'no-store');
    if (order === undefined) return reply.code(404).send({ state: 'not_found' });
    return {
      state: cashierState(order, deps.clock.now()),
      orderStatus: order.status,
      expiresAt: order.cashier_expire_at,
      paidAt: order.pay_time,
    };
  });

  app.get<{ Params: { cashierId: string }; Querystring: Record<string, string | undefined> }>(
    '/cashier/:cashierId/boleto.pdf',
    async (request, reply) => {
      const order = await deps.orders.findByCashier(request.params.cashierId);
      const path = `/cashier/${encodeURIComponent(request.params.cashierId)}`;
      if (order === undefined || payPageOf(order) !== 'boleto') return notFound(request, reply, path);
      // Only a boleto that can still be paid is handed out: an expired or cancelled one would be refused.
      if (cashierState(order, deps.clock.now()) !== 'pending')
        return reply.redirect(`${path}${langSuffix(request)}`, 303);
      const attachment = `attachment; filename="boleto-${order.external_order_id.replace(/[^\w.-]/g, '_')}.pdf"`;
      if (deps.boleto !== undefined && (await deps.boleto.charge(order.id)) !== undefined) {
        // The issuer's own boleto, fetched by Cashgate: the payer's browser asks no third party.
        const issued = await deps.boleto.pdf(order.id);
        if (issued === undefined) return reply.redirect(`${path}${langSuffix(request)}`, 303);
        return reply
          .header('cache-control', 'no-store')
          .header('x-content-type-options', 'nosniff')
          .header('content-disposition', attachment)
          .type('application/pdf')
          .send(issued);
      }
      const merchant = await deps.merchants.getMerchant(order.merchant_id);
      const pdf = await renderBoletoPdf(
        boletoPdfFactsOf(order, { bankCode: deps.boletoBankCode, pix: deps.pix, merchantName: merchant.name }),
      );
      return reply
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff')
        .header('content-disposition', attachment)
        .type('application/pdf')
        .send(Buffer.from(pdf));
    },
  );

  app.post<{ Params: { cashierId: string }; Querystring: Record<string, string | undefined> }>(
    '/cashier/:cashierId/resend',
    async (request, reply) => {
      const order = await deps.orders.findByCashier(request.params.cashierId);
      const path = `/cashier/${encodeURIComponent(request.params.cashierId)}`;
      const lang = langSuffix(request);
      if (order === undefined || payPageOf(order) !== 'mpesa') return reply.redirect(`${path}${lang}`, 303);
      // The order's lock holds the limit and the cooldown: of concurrent posts at most one sends a
      // prompt. Sent or refused, the page then reads where the payer stands from the order.
      const resent = await deps.orders.restartOnRail(
        order.id,
        { limit: MPESA_RESEND_LIMIT, cooldownMs: MPESA_RESEND_COOLDOWN_MS },
        'cashier:payer',
      );
      return reply.redirect(resent ? `${path}${lang === '' ? '?' : `${lang}&`}resent=1` : `${path}${lang}`, 303);
    },
  );

  app.post<{ Params: { cashierId: string }; Querystring: Record<string, string | undefined> }>(
    '/cashier/:cashierId/sandbox',
    async (request, reply) => {
      const order = await deps.orders.findByCashier(request.params.cashierId);
      const lang = langSuffix(request);
      const path = `/cashier/${encodeURIComponent(request.params.cashierId)}`;
      if (order === undefined || !deps.sandbox.enabledFor(order))
        return reply.code(404).type('text/plain').send('not found');
      // A post without a form (no content type) changes nothing.
      const body = formOf(request);
      const action = body.action;
      const events: Record<string, string> = {
        paid: 'paid',
        paid_other: 'paid',
        cancelled: 'cancelled',
        expired: 'expired',
      };
      const event = action === undefined ? undefined : events[action];
      if (event !== undefined) {
        try {
          // The same code path as the admin API's sandbox events.
          await deps.sandbox.apply(order.id, event, {
            source: 'sandbox:cashier',
            ...(action === 'paid_other' && { amount: body.amount ?? '' }),
          });
        } catch (error) {
          if (error instanceof ApiError)
            return reply.redirect(`${path}${lang === '' ? '?' : `${lang}&`}sandbox=amount`, 303);
          // A second click after the order moved on changes nothing; the page shows the state.
          if (!(error instanceof EventNotAllowedError) && !(error instanceof OperatorError)) throw error;
        }
      }
      return reply.redirect(`${path}${lang}`, 303);
    },
  );

  const checkoutPage = async (
    request: FastifyRequest<{ Params: { checkoutId: string }; Querystring: Record<string, string | undefined> }>,
    reply: FastifyReply,
    input?: { choice: CheckoutChoice; error: CheckoutInputError },
  ) => {
    const path = `/checkout/${encodeURIComponent(request.params.checkoutId)}`;
    const state = await deps.checkouts.state(request.params.checkoutId);
    if (state === undefined) return notFound(request, reply, path);
    if (state.order?.cashier_id != null)
      return reply.redirect(`/cashier/${encodeURIComponent(state.order.cashier_id)}${langSuffix(request)}`, 303);
    const currency = checkoutCurrency(state.checkout);
    const lang = languageOf(request, currency);
    const t = cashierTranslator(lang);
    // The aggregate cashier takes reais (a Brazilian page) or pesos (a Mexican one).
    const languages = currency === 'MXN' ? PAGE_LANGUAGES.mexico : PAGE_LANGUAGES.brazil;
    if (state.expired)
      return sendPage(reply, 410, {
        lang,
        t,
        path,
        languages,
        ...checkoutExpiredView({ t, merchantName: state.merchantName }, state),
      });
    const now = deps.clock.now();
    const view = checkoutView(
      { t, lang, path, langQuery: langSuffix(request), now },
      state,
      input?.choice,
      input?.error.problems,
    );
    // data-now lets the countdown's script correct for the browser's clock.
    return sendPage(reply, input === undefined ? 200 : 400, {
      lang,
      t,
      path,
      languages,
      data: { now: String(now) },
      ...view,
    });
  };

  app.get<{ Params: { checkoutId: string }; Querystring: Record<string, string | undefined> }>(
    '/checkout/:checkoutId',
    (request, reply) => checkoutPage(request, reply),
  );

  app.post<{
    Params: { checkoutId: string };
    Querystring: Record<string, string | undefined>;
    Body: Record<string, string | undefined>;
  }>('/checkout/:checkoutId', async (request, reply) => {
    const body = formOf(request);
    const choice: CheckoutChoice = {
      amount: body.amount,
      method: body.method,
      document: body.document,
      name: body.name,
      email: body.email,
    };
    let order: OrderRow | undefined;
    try {
      order = await deps.checkouts.choose(request.params.checkoutId, choice);
    } catch (error) {
      if (error instanceof CheckoutInputError) return checkoutPage(request, reply, { choice, error });
      if (error instanceof CheckoutExpiredError) return checkoutPage(request, reply);
      throw error;
    }
    // An unknown cashier: its page says so.
    if (order === undefined) return checkoutPage(request, reply);
    return reply.redirect(`/cashier/${encodeURIComponent(order.cashier_id ?? '')}${langSuffix(request)}`, 303);
  });
}
