import { createHash, randomInt } from 'node:crypto';
import { buildClabe } from '../rails/stp/clabe.js';
import type { MerchantCaller } from '../auth/plugin.js';
import {
  documentTypeOf,
  generateCpf,
  isValidDocument,
  normalizeDocument,
  type DocumentType,
} from '../brazil/documents.js';
import { MAX_COLLECTION_CENTS, successDetails as brazilSuccessDetails, type BrazilKinds } from '../brazil/kinds.js';
import type { BrazilSettlement } from '../brazil/details.js';
import type { Clock } from '../clock.js';
import type { DepositAddresses } from '../exchange/deposit-addresses.js';
import {
  fiatForTokens,
  formatRate,
  formatUnits,
  parseRate,
  TOKEN_DECIMALS,
  tokensToCover,
} from '../exchange/amounts.js';
import { orderRate, type RateSource } from '../exchange/rates.js';
import { ApiError } from '../http/failures.js';
import { amountField } from '../ledger/amount-field.js';
import type { Ledger } from '../ledger/ledger.js';
import { CURRENCIES, formatMoney, fromDb, MAX_MINOR, parseDecimal, type Minor } from '../money.js';
import type { MerchantService } from '../merchants/service.js';
import { detailsOf, withDetails } from '../orders/details.js';
import { collectionTransitions } from '../orders/effects.js';
import { createOnce, requestHash } from '../orders/idempotency.js';
import type { OrderRow } from '../orders/queries.js';
import * as oq from '../orders/queries.js';
import { paymentCallbackPayload } from '../orders/records.js';
import {
  newOrderId,
  type CreateStep,
  type EventOptions,
  type NewOrder,
  type OrderKindSpec,
  type OrderService,
} from '../orders/service.js';
import type { SandboxInput } from '../orders/sandbox.js';
import { randomTradeHash } from '../rails/chain/addresses.js';
import type { ChainRail } from '../rails/chain/rail.js';
import type { RailOrder, Rails } from '../rails/rails.js';
import { newId } from '../store/ids.js';
import type { Store } from '../store/store.js';
import * as cq from './queries.js';
import type { CheckoutRow } from './queries.js';
import {
  CASHIER_METHOD_SPECS,
  DEFAULT_CASHIER_CURRENCY,
  isCashierCurrency,
  isCashierMethod,
  METHODS_OF_CURRENCY,
  type CashierCurrency,
  type CashierMethod,
} from './methods.js';
import { MEXICO_LIMITS, type MexicoSettlement } from '../mexico/kinds.js';
import { mexicoSuccessDetails, OXXO_CONFIRMATION_WINDOW_MS, type MexicoCollections } from '../mexico/collections.js';

export type { CheckoutRow } from './queries.js';

/** dynamicAmountNotify: 1 (default) a payment of another amount completes the order with it; 2 it is refused. */
export const DYNAMIC_AMOUNT = { accept: 1, refuse: 2 } as const;

/**
 * Where the payer's document comes from: saved under the userIdentity, generated (no userIdentity),
 * or asked for now; none for a peso cashier, whose methods name no Brazilian document.
 */
export type PayerDocument =
  { source: 'saved' | 'generated'; type: DocumentType; number: string } | { source: 'ask' } | { source: 'none' };

/** An aggregate cashier as its page shows it. */
export interface CheckoutState {
  checkout: CheckoutRow;
  merchantName: string;
  /** The methods the merchant offers; a USDT method is unavailable while the operator has no BRL/USDT rate. */
  methods: { method: CashierMethod; available: boolean }[];
  document: PayerDocument;
  order: OrderRow | undefined;
  expired: boolean;
}

/** One thing wrong with what the payer entered on the aggregate cashier's form. */
export type CheckoutProblem =
  | { field: 'amount'; rule: 'amount'; minimum: Minor; maximum: Minor }
  | { field: 'method'; rule: 'choose' | 'unavailable' }
  | { field: 'document'; rule: 'document' }
  /** OXXO: the payer's name (2 to 100 characters) and email, which Stripe's voucher names. */
  | { field: 'name'; rule: 'name' }
  | { field: 'email'; rule: 'email' };

export class CheckoutInputError extends Error {
  constructor(readonly problems: CheckoutProblem[]) {
    super(
      `the cashier form has ${problems.length} problem(s): ${problems.map((p) => `${p.field} (${p.rule})`).join(', ')}`,
    );
    this.name = 'CheckoutInputError';
  }
}

/** The aggregate cashier cannot take a choice any more: its time ran out. */
export class CheckoutExpiredError extends Error {
  constructor(readonly checkoutId: string) {
    super(`aggregate cashier ${checkoutId} has expired`);
    this.name = 'CheckoutExpiredError';
  }
}

/** What the payer's form sends: text as typed. */
export interface CheckoutChoice {
  amount?: string | undefined;
  method?: string | undefined;
  document?: string | undefined;
  /** OXXO: the payer's name and email. */
  name?: string | undefined;
  email?: string | undefined;
}

/** What an order made on an aggregate cashier keeps in its details. */
export interface CashierOrderDetails extends Partial<BrazilSettlement>, Partial<MexicoSettlement> {
  checkoutId: string;
  method: CashierMethod;
  dynamicAmountNotify: number;
  userIdentity?: string;
  userInfoType?: DocumentType;
  userInfoNo?: string;
  /** Where userInfoNo came from: saved earlier, entered by the payer now, or generated by Cashgate. */
  documentSource?: 'saved' | 'entered' | 'generated';
  payParam?: string;
  boletoDueDate?: string;
  linhaFormatted?: string;
  /** USDT_TRC20: the deposit address, the units to send, the rate they were priced at. */
  addressTo?: string;
  depositPath?: string;
  tokenType?: 'USDT';
  chainType?: 'TRON';
  tokenUnits?: string;
  tokenDecimals?: number;
  exchangeRate?: string;
  paidUnits?: string;
  tradeHash?: string;
  /** OXXO: the payer's name and email, as Stripe's voucher needs them. */
  oxxoName?: string;
  oxxoEmail?: string;
  /** The last payment refused (another amount under dynamicAmountNotify 2, or one worth less than a cent): decimal text in `unit` (reais, or USDT). */
  refusedPayment?: { amount: string; unit: string; at: number };
}

declare module '../orders/details.js' {
  interface OrderDetailsByArea {
    cashier: { collection: CashierOrderDetails };
  }
}

export const cashierDetails = (order: Pick<OrderRow, 'id' | 'area' | 'details'>) => detailsOf(order, 'cashier');

/** The smallest amount a payer may enter: R$ 1,00 (or MXN 1.00). */
export const MIN_CASHIER_CENTS = 100n;

/**
 * A payer's amount as typed on a Brazilian phone: "42,50", "1.234,56", "42.50" or "42"; or on a
 * Mexican one: "1,234.50", "$1234.5", "42 MXN" (the dot is the decimal mark, commas group
 * thousands). At most two decimals, no sign, no exponent. Undefined when it is none of these.
 */
export function parsePayerAmount(text: string, currency: CashierCurrency = 'BRL'): Minor | undefined {
  if (currency === 'MXN') {
    const compact = text.replace(/\s|\$|MXN|MX/gi, '');
    if (!/^\d{1,3}(,\d{3})*(\.\d{1,2})?$|^\d+(\.\d{1,2})?$/.test(compact)) return undefined;
    return parseDecimal(compact.replace(/,/g, ''), CURRENCIES.MXN);
  }
  const compact = text.replace(/\s|R\$/g, '');
  let plain = compact;
  if (compact.includes(',')) {
    // The comma is the decimal mark; dots group thousands (1.234,56).
    if (!/^\d{1,3}(\.\d{3})*(,\d{1,2})?$|^\d+(,\d{1,2})?$/.test(compact)) return undefined;
    plain = compact.replace(/\./g, '').replace(',', '.');
  }
  return parseDecimal(plain, CURRENCIES.BRL);
}

/** The sandbox's SPEI sender: a BBVA México CLABE and a clave de rastreo derived from the order. */
function sandboxSpeiSender(orderId: string): Record<string, string> {
  const digits = BigInt(`0x${createHash('sha256').update(orderId).digest('hex').slice(0, 14)}`)
    .toString()
    .padStart(11, '0')
    .slice(-11);
  return {
    payerBank: 'BBVA MEXICO',
    payerBankCode: '40012',
    payerAccount: buildClabe('0121800001', BigInt(digits.slice(-7))),
    payerName: 'PAGADOR DE PRUEBA',
    claveRastreo: `SANDBOX${digits}`,
  };
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;

/** The payer's name and email for an OXXO voucher (Stripe's billing details), or problems added for them. */
function payerContact(
  choice: CheckoutChoice,
  problems: CheckoutProblem[],
): { name: string; email: string } | undefined {
  const name = (choice.name ?? '').trim().replace(/\s+/g, ' ');
  const email = (choice.email ?? '').trim();
  const nameOk = Array.from(name).length >= 2 && Array.from(name).length <= 100;
  const emailOk = email.length <= 254 && EMAIL.test(email);
  if (!nameOk) problems.push({ field: 'name', rule: 'name' });
  if (!emailOk) problems.push({ field: 'email', rule: 'email' });
  return nameOk && emailOk ? { name, email } : undefined;
}

/** The currency of a cashier (the merchant's when it was opened). */
export const checkoutCurrency = (checkout: Pick<CheckoutRow, 'currency'>): CashierCurrency =>
  isCashierCurrency(checkout.currency) ? checkout.currency : DEFAULT_CASHIER_CURRENCY;

/**
 * Aggregate cashiers (endpoint 19): the merchant opens one; the payer enters the amount, picks one of
 * the merchant's methods and, when the method needs it, the document; that makes one order (area
 * `cashier`), paid on the method's own cashier page. Payments are reported through `reportPayment`,
 * which honours dynamicAmountNotify.
 */
export class CheckoutService {
  constructor(
    private readonly deps: {
      store: Store;
      orders: OrderService;
      merchants: MerchantService;
      rates: RateSource;
      addresses: DepositAddresses;
      chain: ChainRail;
      clock: Clock;
      publicBaseUrl: string;
      ledger: Ledger;
      /** The fiat rails of its Pix, boleto, SPEI and OXXO orders. */
      rails: Pick<Rails, 'pix' | 'boleto' | 'spei' | 'oxxo'>;
      /** Mexico's CLABEs and OXXO deadlines. */
      mexico: MexicoCollections;
      /** Brazil's payment codes and success details, shared with Brazil's own collections. */
      brazil: Pick<BrazilKinds, 'collectionCode' | 'boletoLimits'>;
    },
  ) {
    this.orderKind = this.#orderKind();
  }

  /** The order kind of orders made on aggregate cashiers, registered with the order service. */
  readonly orderKind: OrderKindSpec<{ orderId: string; cashierId: string | null }>;

  #orderKind(): OrderKindSpec<{ orderId: string; cashierId: string | null }> {
    return {
      area: 'cashier',
      kind: 'collection',
      createResult: (order) => ({ orderId: order.id, cashierId: order.cashier_id }),
      callbackPayload: (order) => {
        const d = cashierDetails(order);
        return paymentCallbackPayload(order, d.payParam ?? d.addressTo ?? '');
      },
      rail: (order) => {
        const d = cashierDetails(order);
        if (d.method === 'USDT_TRC20') {
          const chain = this.deps.chain;
          return {
            name: chain.name,
            start: async ({ idempotencyKey }: RailOrder) => ({
              channelOrderId: (
                await chain.watchDeposits({
                  orderId: order.id,
                  idempotencyKey,
                  address: d.addressTo ?? '',
                  token: 'USDT',
                })
              ).watchId,
            }),
          };
        }
        const { rails } = this.deps;
        return d.method === 'BOLETO'
          ? rails.boleto
          : d.method === 'SPEI'
            ? rails.spei
            : d.method === 'OXXO'
              ? rails.oxxo
              : rails.pix;
      },
      write: (step) => this.#write(step),
      transition: collectionTransitions(this.deps.ledger, {
        clearing: (order) =>
          CASHIER_METHOD_SPECS[cashierDetails(order).method].rail === 'chain' ? 'token_clearing' : 'rail_clearing',
        successDetails: (order, now, data) => {
          const rail = CASHIER_METHOD_SPECS[cashierDetails(order).method].rail;
          return rail === 'brazil'
            ? brazilSuccessDetails(order, now, data)
            : rail === 'mexico'
              ? mexicoSuccessDetails(data)
              : {};
        },
        // A token payment keeps what the chain reported: the units and the transaction hash; and
        // whether they differ from the units asked for (a difference the reais may round away).
        before: ({ order, event, options }) => {
          if (event !== 'paid' || options.data === undefined) return {};
          const amountDiffers =
            options.data.paidUnits !== undefined && options.data.paidUnits !== cashierDetails(order).tokenUnits;
          return { details: withDetails(order.details, { ...options.data, ...(amountDiffers && { amountDiffers }) }) };
        },
      }),
      refusePayment: (order, options) => this.#refusePayment(order, options),
    };
  }

  /**
   * The create transaction of an order made on an aggregate cashier: a USDT order's deposit address
   * (the next index of the xpub's counter, under its row lock), the cashier bound to the order (a
   * second order for the cashier rolls back), and a document the payer entered saved under the
   * merchant's userIdentity.
   */
  async #write({ tx, order, insert }: CreateStep): Promise<void> {
    const d = cashierDetails(order);
    const deposit = d.method === 'USDT_TRC20' ? await this.deps.addresses.reserve(tx, 'tron') : undefined;
    if (deposit !== undefined) {
      order.rail_ref = deposit.address;
      order.details = withDetails(order.details, { addressTo: deposit.address, depositPath: deposit.path });
    }
    if (d.method === 'SPEI') {
      // The order's own CLABE, under the prefix's row lock: a transfer to it is this order's.
      const clabe = await this.deps.mexico.issueClabe(tx, order.id, order.created_at);
      order.rail_ref = `clabe:${clabe}`;
      order.details = withDetails(order.details, { clabe });
    }
    await insert();
    if (deposit !== undefined) await this.deps.addresses.assign(tx, deposit, order.id, order.created_at);
    if (!(await cq.bindCheckoutOrder(tx, d.checkoutId, order.id))) {
      throw new ApiError({ kind: 'duplicate_external_order_id', externalOrderId: order.external_order_id });
    }
    if (
      d.documentSource === 'entered' &&
      d.userIdentity !== undefined &&
      d.userInfoType !== undefined &&
      d.userInfoNo !== undefined
    ) {
      await cq.savePayerDocument(tx, {
        merchant_id: order.merchant_id,
        user_identity: d.userIdentity,
        document_type: d.userInfoType,
        document_number: d.userInfoNo,
        created_at: order.created_at,
      });
    }
  }

  /** Endpoint 19: opens an aggregate cashier; an identical repeat of the externalOrderId returns the same address. */
  async create(
    caller: MerchantCaller,
    body: {
      externalOrderId: string;
      notifyUrl?: string | undefined;
      remark?: string | undefined;
      returnUrl?: string | undefined;
      userIdentity?: string | undefined;
      dynamicAmountNotify?: number | undefined;
    },
  ): Promise<string> {
    const hash = requestHash(body);
    const merchant = await this.deps.merchants.getMerchant(caller.merchantId);
    const now = this.deps.clock.now();
    const row: CheckoutRow = {
      id: newId('chk', 16),
      merchant_id: caller.merchantId,
      access_key: caller.accessKey,
      external_order_id: body.externalOrderId,
      request_hash: hash,
      notify_url: body.notifyUrl ?? null,
      return_url: body.returnUrl ?? null,
      remark: body.remark ?? null,
      user_identity: body.userIdentity ?? null,
      // No userIdentity: the system makes up the payer's document, flagged as generated.
      generated_document: body.userIdentity === undefined ? generateCpf(() => randomInt(10)) : null,
      dynamic_amount_notify: body.dynamicAmountNotify ?? DYNAMIC_AMOUNT.accept,
      order_id: null,
      expire_at: now + merchant.cashierLifetimeMs,
      created_at: now,
      currency: merchant.cashierCurrency,
    };
    const outcome = await createOnce({
      externalOrderId: body.externalOrderId,
      hash,
      find: (externalOrderId) => cq.findCheckoutByExternalId(this.deps.store.read, caller.merchantId, externalOrderId),
      insert: () =>
        this.deps.store.transact(async (tx) => {
          await caller.nonce.record(tx);
          await cq.insertCheckout(tx, row);
        }),
    });
    return this.address('created' in outcome ? row.id : outcome.repeat.id);
  }

  address(checkoutId: string): string {
    return `${this.deps.publicBaseUrl}/checkout/${checkoutId}`;
  }

  /** The aggregate cashier with everything its page shows, or undefined for an unknown id. */
  async state(checkoutId: string): Promise<CheckoutState | undefined> {
    const db = this.deps.store.read;
    const checkout = await cq.findCheckout(db, checkoutId);
    if (checkout === undefined) return undefined;
    const merchant = await this.deps.merchants.getMerchant(checkout.merchant_id);
    const order = checkout.order_id === null ? undefined : await oq.findOrder(db, checkout.order_id);
    const currency = checkoutCurrency(checkout);
    const usdt = (await this.deps.rates.price(db, currency, 'USDT')) !== undefined;
    // The methods of the cashier's currency the merchant offers (all of them, had it since changed currency).
    const ofCurrency = METHODS_OF_CURRENCY[currency];
    const offered = merchant.cashierMethods.filter((m) => ofCurrency.includes(m));
    return {
      checkout,
      merchantName: merchant.name,
      methods: (offered.length > 0 ? offered : ofCurrency).map((method) => ({
        method,
        available: CASHIER_METHOD_SPECS[method].rail !== 'chain' || usdt,
      })),
      document: await this.#document(checkout),
      order,
      expired: checkout.expire_at <= this.deps.clock.now(),
    };
  }

  async #document(checkout: CheckoutRow): Promise<PayerDocument> {
    // Only Brazil's methods name a CPF or CNPJ.
    if (checkoutCurrency(checkout) !== 'BRL') return { source: 'none' };
    if (checkout.generated_document !== null)
      return { source: 'generated', type: 'CPF', number: checkout.generated_document };
    if (checkout.user_identity === null) return { source: 'ask' };
    const saved = await cq.findPayerDocument(this.deps.store.read, checkout.merchant_id, checkout.user_identity);
    return saved === undefined
      ? { source: 'ask' }
      : { source: 'saved', type: saved.document_type as DocumentType, number: saved.document_number };
  }

  /**
   * The payer's choice: checks the form (every problem at once), then makes the order and binds it to
   * the cashier, saving an entered document under the userIdentity, all in one transaction. A second
   * submission (a double click, another tab) gets the order the first one made. Undefined for an
   * unknown cashier.
   */
  async choose(checkoutId: string, choice: CheckoutChoice): Promise<OrderRow | undefined> {
    const state = await this.state(checkoutId);
    if (state === undefined) return undefined;
    if (state.order !== undefined) return state.order;
    if (state.expired) throw new CheckoutExpiredError(checkoutId);
    const { checkout } = state;
    const problems: CheckoutProblem[] = [];
    const offered = state.methods.find((m) => m.method === choice.method);
    const method = isCashierMethod(choice.method) && offered !== undefined ? choice.method : undefined;
    if (method === undefined) problems.push({ field: 'method', rule: 'choose' });
    else if (offered?.available !== true) problems.push({ field: 'method', rule: 'unavailable' });
    const { minimum, maximum } = this.#limits(checkoutCurrency(checkout), method);
    const amount = parsePayerAmount(choice.amount ?? '', checkoutCurrency(checkout));
    if (amount === undefined || amount < minimum || amount > maximum)
      problems.push({ field: 'amount', rule: 'amount', minimum, maximum });
    let document: { type: DocumentType; number: string; source: 'saved' | 'entered' | 'generated' } | undefined;
    // The document is checked when the method needs it, and when one was typed before a method was chosen.
    const typed = (choice.document ?? '').trim() !== '' && state.document.source !== 'none';
    if (state.document.source === 'none') {
      // A peso cashier asks for no document.
    } else if (
      method === undefined ? typed && state.document.source === 'ask' : CASHIER_METHOD_SPECS[method].needsDocument
    ) {
      if (state.document.source === 'ask') {
        const type = documentTypeOf(choice.document ?? '');
        const number =
          type === undefined ? undefined : normalizeDocument(type, (choice.document ?? '').replace(/\s/g, ''));
        if (type === undefined || number === undefined || !isValidDocument(type, number))
          problems.push({ field: 'document', rule: 'document' });
        else document = { type, number, source: 'entered' };
      } else {
        document = { type: state.document.type, number: state.document.number, source: state.document.source };
      }
    }
    const contact = method === 'OXXO' ? payerContact(choice, problems) : undefined;
    if (problems.length > 0 || method === undefined || amount === undefined) throw new CheckoutInputError(problems);
    try {
      return await this.#makeOrder(checkout, method, amount, document, contact);
    } catch (error) {
      if (!(error instanceof ApiError) || error.failure.kind !== 'duplicate_external_order_id') throw error;
      // Another submission with other input made the order first: the payer pays that one.
      const bound = (await this.state(checkoutId))?.order;
      if (bound === undefined) throw error;
      return bound;
    }
  }

  /**
   * What the payer may enter for the method: reais from R$ 1.00 to the method's Brazilian ceiling
   * (a boleto at an issuer only what the issuer registers: Efí from R$ 5.00, Inter from R$ 2.50);
   * pesos within the Mexican method's limits (OXXO MXN 10.00 to 10,000.00).
   */
  #limits(currency: CashierCurrency, method: CashierMethod | undefined): { minimum: Minor; maximum: Minor } {
    if (currency === 'MXN') {
      const limits = method === 'OXXO' ? MEXICO_LIMITS.OXXO : MEXICO_LIMITS.SPEI;
      return { minimum: limits.min > MIN_CASHIER_CENTS ? limits.min : MIN_CASHIER_CENTS, maximum: limits.max };
    }
    const issuer = method === 'BOLETO' ? this.deps.brazil.boletoLimits : undefined;
    const ceiling =
      method === undefined || method === 'USDT_TRC20' || CASHIER_METHOD_SPECS[method].rail !== 'brazil'
        ? MAX_COLLECTION_CENTS.PIX
        : MAX_COLLECTION_CENTS[method as 'PIX' | 'PIX_DYNAMIC' | 'BOLETO'];
    const maximum = issuer !== undefined && issuer.max < ceiling ? issuer.max : ceiling;
    const minimum = issuer !== undefined && issuer.min > MIN_CASHIER_CENTS ? issuer.min : MIN_CASHIER_CENTS;
    return { minimum, maximum };
  }

  async #makeOrder(
    checkout: CheckoutRow,
    method: CashierMethod,
    amount: Minor,
    document: { type: DocumentType; number: string; source: 'saved' | 'entered' | 'generated' } | undefined,
    contact: { name: string; email: string } | undefined,
  ): Promise<OrderRow> {
    const merchant = await this.deps.merchants.getMerchant(checkout.merchant_id);
    const spec = CASHIER_METHOD_SPECS[method];
    const currency = checkoutCurrency(checkout);
    const details: CashierOrderDetails = {
      checkoutId: checkout.id,
      method,
      dynamicAmountNotify: checkout.dynamic_amount_notify,
      ...(checkout.user_identity !== null && { userIdentity: checkout.user_identity }),
      ...(document !== undefined && {
        userInfoType: document.type,
        userInfoNo: document.number,
        documentSource: document.source,
      }),
      ...(contact !== undefined && { oxxoName: contact.name, oxxoEmail: contact.email }),
    };
    const id = newOrderId(this.orderKind);
    let fields: Pick<NewOrder, 'railRef' | 'cashierExpiry'> = {
      cashierExpiry: { lifetimeMs: merchant.cashierLifetimeMs },
    };
    if (method === 'USDT_TRC20') {
      const price = await this.deps.rates.price(this.deps.store.read, currency, 'USDT');
      if (price === undefined) throw new CheckoutInputError([{ field: 'method', rule: 'unavailable' }]);
      const rate = orderRate(price, 'token_to_fiat');
      const decimals = TOKEN_DECIMALS.TRON;
      Object.assign(details, {
        tokenType: 'USDT',
        chainType: 'TRON',
        tokenDecimals: decimals,
        exchangeRate: formatRate(rate),
        tokenUnits: tokensToCover(amount, CURRENCIES[currency], rate, decimals).toString(),
      });
    } else if (method === 'OXXO') {
      // The voucher's last moment is fixed now; the order waits past it for Stripe's confirmation.
      const oxxoExpiresAt = this.deps.mexico.oxxoDeadline(this.deps.clock.now());
      details.oxxoExpiresAt = oxxoExpiresAt;
      fields = { cashierExpiry: { at: oxxoExpiresAt + OXXO_CONFIRMATION_WINDOW_MS } };
    } else if (method !== 'SPEI') {
      const code = this.deps.brazil.collectionCode(id, method, amount, merchant.cashierLifetimeMs);
      Object.assign(details, code.details);
      fields = { railRef: code.railRef, cashierExpiry: code.cashierExpiry };
    }
    const { order } = await this.deps.orders.create(this.orderKind, {
      id,
      merchantId: checkout.merchant_id,
      accessKey: checkout.access_key,
      externalOrderId: checkout.external_order_id,
      requestBody: {
        checkoutId: checkout.id,
        method,
        amount: amount.toString(),
        document: document?.number ?? null,
        ...(contact !== undefined && { email: contact.email }),
      },
      currency,
      channelType: method,
      payType: spec.payType,
      feeChannel:
        method === 'USDT_TRC20'
          ? currency === 'MXN'
            ? 'cashier.collection.USDT_TRC20_MXN'
            : 'cashier.collection.USDT_TRC20'
          : method === 'SPEI' || method === 'OXXO'
            ? `cashier.collection.${method}`
            : `bra.collection.${method}`,
      amount,
      notifyUrl: checkout.notify_url,
      returnUrl: checkout.return_url,
      remark: checkout.remark,
      details,
      ...fields,
    });
    return order;
  }

  /**
   * A rail's report of a payment to an order made on an aggregate cashier: `amount` in reais for the
   * fiat methods, `units` of the token for USDT (worth their units at the order's rate, rounded down
   * to the cent). Whether another amount is taken is decided under the order's lock by the order
   * kind's `refusePayment` (dynamicAmountNotify).
   */
  async reportPayment(
    order: OrderRow,
    payment: {
      amount?: Minor;
      units?: bigint;
      tradeHash?: string;
      source: string;
      /** What the rail says of the payer (a SPEI sender's bank, account and name). */
      data?: Readonly<Record<string, string>>;
    },
  ): Promise<OrderRow> {
    const d = cashierDetails(order);
    if (d.method !== 'USDT_TRC20')
      return this.deps.orders.applyEvent(order.id, 'paid', {
        source: payment.source,
        amount: payment.amount ?? fromDb(order.amount),
        ...(payment.data !== undefined && { data: payment.data }),
      });
    const expected = BigInt(d.tokenUnits ?? '0');
    const units = payment.units ?? expected;
    const rate = parseRate(d.exchangeRate ?? '');
    if (rate === undefined) throw new Error(`order ${order.id} has no valid exchangeRate`);
    const amount =
      units === expected
        ? fromDb(order.amount)
        : fiatForTokens(units, d.tokenDecimals ?? 6, rate, CURRENCIES[order.currency]);
    return this.deps.orders.applyEvent(order.id, 'paid', {
      source: payment.source,
      amount,
      data: { paidUnits: units.toString(), tradeHash: payment.tradeHash ?? randomTradeHash('TRON') },
    });
  }

  /**
   * dynamicAmountNotify under the order's lock: another amount (in token units for USDT) is refused
   * when the cashier asked for 2; a payment worth less than a cent is refused always (nothing to credit).
   */
  #refusePayment(order: OrderRow, options: EventOptions): Record<string, unknown> | undefined {
    const d = cashierDetails(order);
    const amount = options.amount ?? fromDb(order.amount);
    const usdt = options.data?.paidUnits !== undefined;
    const differs = usdt ? options.data?.paidUnits !== d.tokenUnits : amount !== fromDb(order.amount);
    if (amount > 0n && !(differs && d.dynamicAmountNotify === DYNAMIC_AMOUNT.refuse)) return undefined;
    const sent = usdt
      ? { amount: formatUnits(BigInt(options.data?.paidUnits ?? '0'), d.tokenDecimals ?? 6), unit: 'USDT' }
      : { amount: formatMoney(amount, order.currency), unit: order.currency };
    return { refusedPayment: { ...sent, at: this.deps.clock.now() } };
  }

  /** The sandbox's rail for these orders: `paid` goes through reportPayment (amount in reais, or in USDT for USDT orders). */
  sandboxEvent(order: OrderRow, event: string, input: SandboxInput): Promise<OrderRow> {
    if (event !== 'paid') return this.deps.orders.applyEvent(order.id, event, { source: input.source });
    const d = cashierDetails(order);
    const tradeHash = input.tradeHash === undefined ? {} : { tradeHash: input.tradeHash };
    // A sandbox SPEI transfer comes from a made-up sender, as a real one names its bank, account and name.
    const sender = d.method === 'SPEI' ? { data: sandboxSpeiSender(order.id) } : {};
    if (input.amount === undefined) return this.reportPayment(order, { ...tradeHash, ...sender, source: input.source });
    if (d.method === 'USDT_TRC20') {
      const units = amountField('amount', input.amount, order.currency, {
        decimals: d.tokenDecimals ?? 6,
        maximum: MAX_MINOR,
      });
      return this.reportPayment(order, { units, ...tradeHash, source: input.source });
    }
    return this.reportPayment(order, {
      amount: amountField('amount', input.amount, order.currency),
      ...sender,
      source: input.source,
    });
  }
}
