/**
 * Request, response and callback types of the Cashgate merchant API (docs/api.md, docs/callbacks.md).
 *
 * They follow the server's TypeBox schemas: test/sdk-types.test.ts asserts, at compile time, that
 * each of them and the server schema it mirrors are assignable both ways, so a schema change that
 * these types do not follow fails `npm run typecheck`.
 */

/** An amount: a decimal string (preferred) or a JSON number, in plain notation. */
export type Amount = string | number;

/** Every /api/v3 answer is this envelope. */
export interface Envelope<T = unknown> {
  code: string;
  success: boolean;
  msg: string;
  msgEn: string;
  data: T;
}

/** Members every order-creating request shares. */
export interface CreateCommon {
  /** Your id for the order, unique per order kind: a repeat with the same body returns the first result. */
  externalOrderId: string;
  /** Where this order's callback goes, instead of the unified callback address. */
  notifyUrl?: string;
  /** At most 255 characters; echoed as tradeNote. */
  remark?: string;
}

/** Endpoints 8, 9, 14, 15 and 3, 5: both ids must name the same order of yours. */
export interface OrderQuery {
  externalOrderId: string;
  orderId: string;
}

// ---------------------------------------------------------------- Kenya

/** Endpoint 6. */
export interface KenyaCollectionRequest extends CreateCommon {
  /** Whole shillings. */
  amount: Amount;
  channelType: 'BANK' | 'CHARGE';
  /** 2547XXXXXXXX or 2541XXXXXXXX. */
  phone: string;
  /** The phone that receives the STK PIN prompt. */
  checkingPhone: string;
  returnUrl?: string;
}

/** Endpoint 6's data. */
export interface KenyaCollectionResult {
  cashierUrl: string;
  cashierExpireTime: number;
  currency: string;
  cashierCurrencyAmount: string;
  returnUrl: string;
  currencyOrderVo: { externalOrderId: string; tradeNote: string; orderId: string };
}

/** Endpoint 7. */
export interface KenyaTransferRequest extends CreateCommon {
  channelType: 'BANK';
  /** Whole shillings. */
  currencyAmount: Amount;
  phone: string;
  /** Reserved: stored and echoed as accountCode. */
  bankName?: string;
}

/** Endpoints 7, 12 and 13's data. */
export interface TransferResult {
  orderId: string;
  /** ACCEPTED */
  orderStatus: string;
  externalOrderId: string;
  currencyType: string;
}

/** The collection and transfer order record (endpoints 8, 9, 14, 15): `data` is an array of one. */
export interface OrderRecord {
  orderId: string;
  cashierId: string;
  orderType: number;
  orderResourceType: number;
  userId: string;
  /** Collections: 1 pending, 2 paid. Transfers: 1 accepted, 2 processing, 4 bank rejected, 8 success, 16 failed. */
  orderStatus: number;
  orderTime: number;
  channelOrderId: string;
  externalOrderId: string;
  orderAmount: string;
  orderActualAmount: string | null;
  orderEntryAmount: string;
  orderFee: string;
  orderPayTime: number | null;
  orderCompleteTime: number | null;
  currencyType: string;
  payType: number;
  tradeNote: string;
  notifyUrl: string;
  markStatus: number;
  errorMsg: string | null;
  errorMsgEn: string | null;
  accountType: string;
  accountName: string;
  accountNo: string;
  orderTypeCode: string;
  orderResourceTypeCode: string;
  orderStatusCode: string;
  payTypeCode: string;
}

/** Endpoint 9's record: orderFee is an integer there, as the spec says. */
export interface KenyaTransferRecord extends Omit<OrderRecord, 'orderFee'> {
  orderFee: number;
}

/** Endpoints 10 and 16: one record per currency. */
export interface BalanceRecord {
  accountBalance: string;
  accountFreezeAmount: string;
  accountStatusId: number;
  accountWaitSettledAmount: string;
  currencyType: string;
  accountStatus: string;
}

// ---------------------------------------------------------------- Brazil

export type DocumentType = 'CPF' | 'CNPJ';

/** Endpoint 11. */
export interface BrazilCollectionRequest extends CreateCommon {
  /** Reais, at most 2 decimal places. */
  amount: Amount;
  channelType: 'PIX' | 'PIX_DYNAMIC' | 'BOLETO';
  userInfoType?: DocumentType;
  userInfoNo?: string;
  userInfoName?: string;
  returnUrl?: string;
}

/** Endpoint 11's data. */
export interface BrazilCollectionResult {
  cashierCurrencyAmount: string;
  cashierExpireTime: number;
  cashierId: string;
  cashierUrl: string;
  currency: string;
  currencyOrderVo: {
    amount: string;
    currency: string;
    externalOrderId: string;
    orderId: string;
    orderStatus: string;
    orderStatusCode: number;
    orderTime: number;
    /** PIX and PIX_DYNAMIC: the BR Code (copy and paste); BOLETO: the 47-digit linha digitável. */
    payParam: string;
    payType: number;
    tradeNote: string;
  };
  isCreateOrder: boolean;
  payType: number;
  returnUrl: string;
  userInfoName: string;
  userInfoNo: string;
  userInfoType: string;
  payTypeCode: string;
}

export interface BrazilPerson {
  personIdType: DocumentType;
  personId: string;
  personName: string;
}

/** Endpoint 12. */
export interface BrazilPixTransferRequest extends CreateCommon, BrazilPerson {
  /** Reais, at most 2 decimal places. */
  currencyAmount: Amount;
  channelType: 'PIX';
  accountType: 'CPF' | 'CNPJ' | 'PHONE' | 'EMAIL' | 'EVP';
  /** The Pix key, valid for accountType. */
  accountId: string;
}

/** Endpoint 13. */
export interface BrazilBankTransferRequest extends CreateCommon, BrazilPerson {
  currencyAmount: Amount;
  channelType: 'BANK';
  /** CC checking, CP savings. */
  accountType: 'CC' | 'CP';
  accountId: string;
  /** A name from endpoint 18. */
  bankName: string;
  agency: string;
}

/** Endpoint 14's record: the order record with the Brazil collection query's own members. */
export interface BrazilCollectionRecord extends OrderRecord {
  requestType: number;
  businessId: string;
  userType: number;
  operatorId: number;
  expansionParam: string;
  /** merchant, saved, entered, generated, or empty. */
  payerDocumentSource: string;
}

/** Endpoint 17. */
export interface VoucherRequest {
  orderId: string;
}

/** Endpoint 18. */
export interface BankListRequest {
  currencyType?: 'BRL';
}

/** Endpoint 18's data: one per bank. */
export interface BankName {
  bankNames: string;
}

// ---------------------------------------------------------------- Aggregate cashier

/** Endpoint 19; `data` is the cashier address. */
export interface CheckoutRequest {
  externalOrderId: string;
  notifyUrl?: string;
  remark?: string;
  returnUrl?: string;
  /** Your id for the payer: a CPF/CNPJ saved under it is reused. */
  userIdentity?: string;
  /** 1 (default): another amount paid completes the order with it; 2: it is refused. */
  dynamicAmountNotify?: 1 | 2;
}

// ---------------------------------------------------------------- Exchange

export type Chain = 'ETH' | 'TRON' | 'BSC';
export type Token = 'USDT';

/** Endpoint 2. */
export interface FiatToTokenRequest {
  addressTo: string;
  chainType: Chain;
  tokenType: Token;
  /** Whole units of currencyType, at least 1. */
  currencyAmount: Amount;
  currencyType: 'BRL' | 'MXN';
  externalOrderId: string;
  remark?: string;
}

/** Endpoint 4. */
export interface TokenToFiatRequest {
  tokenAmount: Amount;
  chainType: 'TRON';
  addressFrom: string;
  currencyType: 'BRL';
  tokenType: Token;
  /** Optional here: without it the create is not idempotent and is never retried. */
  externalOrderId?: string;
  notifyUrl?: string;
  remark?: string;
}

export interface ExchangeCreateCommon {
  orderId: string;
  symbolType: string;
  externalOrderId: string;
  currencyType: string;
  tokenType: string;
  chainType: string;
  /** Whole units. */
  currencyAmount: number;
  /**
   * The token amount as a JSON number. JavaScript reads it as a double: for 18-decimal tokens use
   * the query's tokenAmount string, which keeps every digit.
   */
  tokenAmount: number;
}

/** Endpoint 2's data. */
export type FiatToTokenResult = ExchangeCreateCommon;

/** Endpoint 4's data. */
export interface TokenToFiatResult extends ExchangeCreateCommon {
  /** The deposit address: send exactly tokenAmount from addressFrom before the quote expires. */
  addressTo: string;
}

export interface ExchangeRecordCommon {
  tokenAmount: string;
  currencyAmount: string;
  orderAmount: string;
  orderActualAmount: number | null;
  orderPayTime: number | null;
  orderCompleteTime: number | null;
  currencyType: string;
  tokenType: string;
  chainType: string;
  exSymbolType: string;
  exchangeRate: string;
  addressTo: string;
  remark: string;
  tradeHash: string;
  errorMsg: string | null;
  errorMsgEn: string | null;
  orderId: string;
  externalOrderId: string;
  /** 1 wait pay currency, 2 receiving currency, 4 wait receive token, 8 complete, 32 failed. */
  orderStatus: number;
}

/** Endpoint 3's data, and the fiat → token callback. */
export interface FiatToTokenRecord extends ExchangeRecordCommon {
  orderFee: number | null;
}

/** Endpoint 5's data, and the token → fiat callback. */
export interface TokenToFiatRecord extends ExchangeRecordCommon {
  orderFee: string | null;
  notifyUrl: string;
}

// ---------------------------------------------------------------- Callbacks

/** The payment callback: Kenya and Brazil collections, and orders paid on an aggregate cashier. */
export interface PaymentCallback {
  currencyType: string;
  orderActualAmount: string | null;
  orderId: string;
  orderFee: string | null;
  orderStatus: string;
  payParam: string;
  externalOrderId: string;
  tradeNote: string;
  payTypeName: string;
  orderAmount: string | null;
  orderTime: number;
  payType: number;
  /** 1 pending payment, 2 payment successful. */
  orderStatusCode: number;
  markStatus: number;
  orderPayTime: number | null;
  errorMsg: string | null;
  errorMsgEn: string | null;
}

/** The Kenya transfer callback (markStatus is a string here, as the spec lists it). */
export interface KenyaTransferCallback {
  currencyType: string;
  accountCode: string;
  accountName: string;
  orderId: string;
  accountType: string;
  orderFee: string | null;
  orderStatus: string;
  externalOrderId: string;
  payTypeName: string;
  orderAmount: string | null;
  orderPayTime: number | null;
  orderTime: number;
  payType: number;
  userInfoName: string;
  accountNo: string;
  /** 1 accepted, 2 bank processing, 4 failed by bank, 8 success, 16 failed. */
  orderStatusCode: number;
  markStatus: string;
}

/** The Brazil transfer callback. */
export interface BrazilTransferCallback {
  currencyType: string;
  userInfoNo: string;
  orderId: string;
  userInfoType: string;
  accountType: string;
  orderFee: string | null;
  orderStatus: string;
  externalOrderId: string;
  tradeNote: string;
  payTypeName: string;
  orderAmount: string | null;
  orderTime: number;
  payType: number;
  userInfoName: string;
  accountNo: string;
  /** 1 accepted, 2 bank processing, 4 failed by bank, 8 success, 16 failed. */
  orderStatusCode: number;
  markStatus: number;
  orderPayTime: number | null;
  errorMsg: string | null;
  errorMsgEn: string | null;
}

/** Any callback body Cashgate sends; narrow it by the order you know (its orderId prefix or your externalOrderId). */
export type CallbackPayload =
  PaymentCallback | KenyaTransferCallback | BrazilTransferCallback | FiatToTokenRecord | TokenToFiatRecord;

/**
 * The members of each callback body, for code that checks a payload at run time (the SDK's own
 * end-to-end test compares them with what the server sends).
 */
export const CALLBACK_MEMBERS = {
  payment: memberList<PaymentCallback>()([
    'currencyType',
    'orderActualAmount',
    'orderId',
    'orderFee',
    'orderStatus',
    'payParam',
    'externalOrderId',
    'tradeNote',
    'payTypeName',
    'orderAmount',
    'orderTime',
    'payType',
    'orderStatusCode',
    'markStatus',
    'orderPayTime',
    'errorMsg',
    'errorMsgEn',
  ]),
  kenyaTransfer: memberList<KenyaTransferCallback>()([
    'currencyType',
    'accountCode',
    'accountName',
    'orderId',
    'accountType',
    'orderFee',
    'orderStatus',
    'externalOrderId',
    'payTypeName',
    'orderAmount',
    'orderPayTime',
    'orderTime',
    'payType',
    'userInfoName',
    'accountNo',
    'orderStatusCode',
    'markStatus',
  ]),
  brazilTransfer: memberList<BrazilTransferCallback>()([
    'currencyType',
    'userInfoNo',
    'orderId',
    'userInfoType',
    'accountType',
    'orderFee',
    'orderStatus',
    'externalOrderId',
    'tradeNote',
    'payTypeName',
    'orderAmount',
    'orderTime',
    'payType',
    'userInfoName',
    'accountNo',
    'orderStatusCode',
    'markStatus',
    'orderPayTime',
    'errorMsg',
    'errorMsgEn',
  ]),
} as const;

/** A list of every member of T, checked at compile time: a missing or unknown member does not compile. */
function memberList<T>() {
  return <const K extends readonly (keyof T)[]>(keys: K & ([keyof T] extends [K[number]] ? unknown : never)) => keys;
}
