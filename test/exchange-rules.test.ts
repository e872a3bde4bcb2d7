import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Credentials } from '@cashgate/sdk';
import bs58check from 'bs58check';
import { SANDBOX_XPUBS } from '../src/rails/chain/derivation.js';
import { databaseLabel } from './support/database.js';
import {
  QUERY_TO_FIAT,
  QUERY_TO_WALLET,
  TO_FIAT,
  TO_WALLET,
  TRON_FROM,
  TRON_TO,
  tronAddressAt,
  units,
} from './support/exchange.js';
import { signedCall, startTestGateway, type EnvelopeResponse, type TestGateway } from './support/gateway.js';

/** The EIP-55 test vectors of reference/rails.md §7. */
const EIP55 = [
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
] as const;

/** The address with the case of its first hex letter flipped: still mixed case, no longer EIP-55. */
function flipOneLetter(address: string): string {
  const i = address.slice(2).search(/[a-fA-F]/) + 2;
  const char = address.charAt(i);
  const flipped = char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase();
  return address.slice(0, i) + flipped + address.slice(i + 1);
}

/** TRON_TO with its 11th character changed: Base58 text of the right length whose checksum fails. */
const TRON_CHANGED = `${TRON_TO.slice(0, 10)}y${TRON_TO.slice(11)}`;
/** A valid Base58Check text of 34 characters starting with T, but with version byte 0x42 instead of 0x41. */
const TRON_WRONG_VERSION = bs58check.encode(Buffer.from('42a614f803b6fd780986a42c78ec9c7f77e6ded13c', 'hex'));
const EVM_39 = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae';

const AMOUNT_RULE = {
  currencyAmount:
    /^currencyAmount must be a whole number without leading zeros from 1 to 90071992547409, without sign or exponent$/,
  tokenAmount:
    /^tokenAmount must be a plain decimal number with at most 6 decimal places and no leading zeros from 0\.000001 to 9007199254\.740991, without sign or exponent$/,
};
const EVM_RULE = (field: string) =>
  new RegExp(
    `^${field} must be an address of 0x and 40 hexadecimal digits, exactly in EIP-55 checksum case when it mixes upper and lower case$`,
  );
const TRON_RULE = (field: string) =>
  new RegExp(
    `^${field} must be a TRON address: 34 Base58 characters starting with T, with a valid Base58Check checksum and version byte 0x41$`,
  );
const ORDER_NOT_FOUND = /^order not found: /;

let seq = 0;
const ext = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;

type Body = Record<string, unknown>;
const without = (body: Body, field: string): Body =>
  Object.fromEntries(Object.entries(body).filter(([k]) => k !== field));

/** A refused create: the body that breaks one rule, and the msgEn that names the field and the rule. */
type Row = readonly [label: string, body: Body, msgEn: RegExp];

type JsonKind = 'string' | 'integer' | 'number' | 'null';
type Shape = Record<string, readonly JsonKind[]>;

/**
 * Checks `data` has exactly the members of `shape`, each of one of its JSON kinds; a number is also
 * read from the raw response text, where an integer must have no point and no number an exponent.
 */
function assertShape(label: string, response: EnvelopeResponse, shape: Shape): void {
  const data = response.body.data as Record<string, unknown>;
  assert.deepEqual(Object.keys(data).sort(), Object.keys(shape).sort(), `${label}: members`);
  for (const [field, kinds] of Object.entries(shape)) {
    const value = data[field];
    const where = `${label}: ${field} = ${JSON.stringify(value)} should be ${kinds.join(' | ')}`;
    if (value === null) {
      assert.ok(kinds.includes('null'), where);
    } else if (typeof value === 'string') {
      assert.ok(kinds.includes('string'), where);
    } else if (typeof value === 'number') {
      const raw = new RegExp(`"${field}":(-?[0-9][0-9.eE+-]*)[,}]`).exec(response.text)?.[1];
      assert.ok(raw !== undefined, `${where}: not found in ${response.text}`);
      if (kinds.includes('integer') && !kinds.includes('number')) {
        assert.ok(Number.isSafeInteger(value) && /^-?\d+$/.test(raw), `${where}: written ${raw}`);
      } else {
        assert.ok(kinds.includes('number') && /^-?\d+(?:\.\d+)?$/.test(raw), `${where}: written ${raw}`);
      }
    } else {
      assert.fail(where);
    }
  }
}

const CREATE_MEMBERS: Shape = {
  orderId: ['string'],
  symbolType: ['string'],
  externalOrderId: ['string'],
  currencyType: ['string'],
  tokenType: ['string'],
  chainType: ['string'],
  currencyAmount: ['integer'],
  tokenAmount: ['number'],
};
const FIAT_TO_TOKEN_RESULT: Shape = CREATE_MEMBERS;
const TOKEN_TO_FIAT_RESULT: Shape = { ...CREATE_MEMBERS, addressTo: ['string'] };

const RECORD_MEMBERS: Shape = {
  tokenAmount: ['string'],
  currencyAmount: ['string'],
  orderAmount: ['string'],
  orderActualAmount: ['number', 'null'],
  orderPayTime: ['integer', 'null'],
  orderCompleteTime: ['integer', 'null'],
  currencyType: ['string'],
  tokenType: ['string'],
  chainType: ['string'],
  exSymbolType: ['string'],
  exchangeRate: ['string'],
  addressTo: ['string'],
  remark: ['string'],
  tradeHash: ['string'],
  errorMsg: ['string', 'null'],
  errorMsgEn: ['string', 'null'],
  orderId: ['string'],
  externalOrderId: ['string'],
  orderStatus: ['integer'],
};
const FIAT_TO_TOKEN_RECORD: Shape = { ...RECORD_MEMBERS, orderFee: ['number', 'null'] };
const TOKEN_TO_FIAT_RECORD: Shape = { ...RECORD_MEMBERS, orderFee: ['string', 'null'], notifyUrl: ['string'] };

describe(`Exchange rules (${databaseLabel})`, () => {
  let gw: TestGateway;
  /** The main merchant: 1 % fee on fiat → token, 0.5 % on token → fiat. */
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  /** Another merchant, whose fixed fee of 5.00 BRL swallows small exchanges. */
  let other: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const call = (path: string, body: unknown, credentials: Credentials = merchant.credentials) =>
    signedCall(gw.url, credentials, { path, body }, gw.clock.now());
  const balance = async (merchantId: string, currency = 'BRL') => {
    const response = await gw.admin('GET', `/admin/v1/merchants/${merchantId}/balances`);
    const found = response.body.balances.find((b: { currency: string }) => b.currency === currency);
    return { available: String(found?.available ?? '0.00'), frozen: String(found?.frozen ?? '0.00') };
  };
  const orderCount = async (merchantId: string) =>
    Number(
      (
        await gw.gateway.store.read
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('merchant_id', '=', merchantId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const depositAddressCount = async () =>
    Number(
      (
        await gw.gateway.store.read
          .selectFrom('deposit_addresses')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const nextAddressIndex = async () =>
    (await gw.gateway.store.read.selectFrom('address_counters').select('next_index').executeTakeFirst())?.next_index ??
    0;
  /** What a refused create must leave untouched. */
  const footprint = async (merchantId: string) => ({
    balance: await balance(merchantId),
    orders: await orderCount(merchantId),
    depositAddresses: await depositAddressCount(),
    nextAddressIndex: await nextAddressIndex(),
  });
  /** A key of an existing merchant, active now. */
  const keyFor = async (merchantId: string, permissions: string[]): Promise<Credentials> => {
    const key = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/api-keys`, {
      permissions,
      ipWhitelist: ['0.0.0.0'],
      debug: false,
    });
    assert.equal(key.status, 200, JSON.stringify(key.body));
    const wait = (key.body.activeAt as number) - gw.clock.now();
    if (wait >= 0) gw.clock.advance(wait + 1);
    return { accessKey: key.body.accessKey, secretKey: key.body.secretKey };
  };
  const assertRefused = (label: string, response: EnvelopeResponse, msgEn: RegExp) => {
    assert.equal(response.status, 400, `${label}: HTTP status (${response.text})`);
    assert.equal(response.body.code, '300', `${label}: code`);
    assert.equal(response.body.success, false, `${label}: success`);
    assert.equal(response.body.data, null, `${label}: data`);
    assert.match(response.body.msgEn, msgEn, `${label}: msgEn`);
    assert.equal(response.body.msg, response.body.msgEn, `${label}: msg is msgEn for an English-speaking merchant`);
  };
  const assertCreated = (label: string, response: EnvelopeResponse) => {
    assert.deepEqual(
      [response.status, response.body.code, response.body.success],
      [200, '200', true],
      `${label}: ${response.text}`,
    );
  };

  const fiatToToken = (extra: Body = {}): Body => ({
    addressTo: TRON_TO,
    chainType: 'TRON',
    tokenType: 'USDT',
    currencyAmount: '10',
    currencyType: 'BRL',
    externalOrderId: ext('f2t'),
    remark: 'rules',
    ...extra,
  });
  const tokenToFiat = (extra: Body = {}): Body => ({
    tokenAmount: '10',
    chainType: 'TRON',
    addressFrom: TRON_FROM,
    currencyType: 'BRL',
    tokenType: 'USDT',
    externalOrderId: ext('t2f'),
    notifyUrl: 'https://merchant.example/notify',
    remark: 'rules',
    ...extra,
  });

  before(async () => {
    // No pool: the footprints compare the address counter, which a pool's worker moves at any time
    // (test/deposit-address-pool.test.ts proves a refused create puts its pooled address back).
    gw = await startTestGateway({ env: { DEPOSIT_ADDRESS_POOL_SIZE: '0' } });
    merchant = await gw.merchantWithKey();
    other = await gw.merchantWithKey();
    // BRL only: this file's gateway has no MXN rate.
    assert.equal((await gw.admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.40', sell: '5.4321' })).status, 200);
    const setFee = async (merchantId: string, channel: string, fee: Body) =>
      assert.equal(
        (await gw.admin('PUT', `/admin/v1/merchants/${merchantId}/fees/${channel}`, { reason: 'test fee', ...fee }))
          .status,
        200,
        `fee ${channel}`,
      );
    await setFee(merchant.merchantId, 'exchange.fiat_to_token.BRL', { percentBps: 100 });
    await setFee(merchant.merchantId, 'exchange.token_to_fiat.BRL', { percentBps: 50 });
    await setFee(other.merchantId, 'exchange.fiat_to_token.BRL', { percentBps: 0, fixed: '5.00' });
    await setFee(other.merchantId, 'exchange.token_to_fiat.BRL', { percentBps: 0, fixed: '5.00' });
    for (const id of [merchant.merchantId, other.merchantId]) {
      const credit = await gw.admin('POST', `/admin/v1/merchants/${id}/balance-adjustments`, {
        currency: 'BRL',
        amount: '10000.00',
        reason: 'test funds',
      });
      assert.equal(credit.status, 200);
    }
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await gw.close();
    assert.deepEqual(breaches, [], 'cashgate audit is clean after the suite');
  });

  it('endpoint 2 (fiat → token) refuses every body that breaks one rule, with a 300 naming the field, and writes nothing', async () => {
    const base = fiatToToken();
    const rows: Row[] = [
      ...(['addressTo', 'chainType', 'tokenType', 'currencyAmount', 'currencyType', 'externalOrderId'] as const).map(
        (field): Row => [`missing ${field}`, without(base, field), new RegExp(`^${field} is required$`)],
      ),
      ['addressTo a number', { ...base, addressTo: 123 }, /^addressTo must be a string$/],
      ['addressTo null', { ...base, addressTo: null }, /^addressTo must be a string$/],
      ['chainType a number', { ...base, chainType: 1 }, /^chainType must be one of ETH, TRON, BSC$/],
      ['tokenType a boolean', { ...base, tokenType: true }, /^tokenType must be one of USDT$/],
      ['currencyAmount a boolean', { ...base, currencyAmount: true }, /^currencyAmount must be a string or a number$/],
      [
        'currencyAmount an object',
        { ...base, currencyAmount: { value: '10' } },
        /^currencyAmount must be a string or a number$/,
      ],
      ['currencyAmount an array', { ...base, currencyAmount: ['10'] }, /^currencyAmount must be a string or a number$/],
      ['currencyAmount null', { ...base, currencyAmount: null }, /^currencyAmount must be a string or a number$/],
      ['currencyType a number', { ...base, currencyType: 986 }, /^currencyType must be one of BRL, MXN$/],
      ['externalOrderId a number', { ...base, externalOrderId: 42 }, /^externalOrderId must be a string$/],
      ['remark a number', { ...base, remark: 7 }, /^remark must be a string$/],
      ['chainType SOL', { ...base, chainType: 'SOL' }, /^chainType must be one of ETH, TRON, BSC$/],
      ['chainType in lower case', { ...base, chainType: 'tron' }, /^chainType must be one of ETH, TRON, BSC$/],
      ['chainType empty', { ...base, chainType: '' }, /^chainType must be one of ETH, TRON, BSC$/],
      ['tokenType USDC', { ...base, tokenType: 'USDC' }, /^tokenType must be one of USDT$/],
      ['tokenType in lower case', { ...base, tokenType: 'usdt' }, /^tokenType must be one of USDT$/],
      ['currencyType USD', { ...base, currencyType: 'USD' }, /^currencyType must be one of BRL, MXN$/],
      [
        'currencyType KES (a ledger currency, not an exchange one)',
        { ...base, currencyType: 'KES' },
        /^currencyType must be one of BRL, MXN$/,
      ],
      ['currencyType in lower case', { ...base, currencyType: 'brl' }, /^currencyType must be one of BRL, MXN$/],
      ...['0', '1.5', '-1', '1e3', '', 'abc', '1.0', '0.99', '+5', '90071992547410'].map((amount): Row => [
        `currencyAmount ${JSON.stringify(amount)}`,
        { ...base, currencyAmount: amount },
        AMOUNT_RULE.currencyAmount,
      ]),
      ...[0, 1.5, -1].map((amount): Row => [
        `currencyAmount the number ${amount}`,
        { ...base, currencyAmount: amount },
        AMOUNT_RULE.currencyAmount,
      ]),
      [
        'remark of 256 characters',
        { ...base, remark: 'r'.repeat(256) },
        /^remark must be at most 255 characters long$/,
      ],
      [
        'externalOrderId of 65 characters',
        { ...base, externalOrderId: 'e'.repeat(65) },
        /^externalOrderId must be at most 64 characters long$/,
      ],
      [
        'externalOrderId empty',
        { ...base, externalOrderId: '' },
        /^externalOrderId must be at least 1 character long$/,
      ],
      ['an unknown member', { ...base, foo: 1 }, /^unknown field: foo$/],
      [
        'token → fiat members',
        { ...base, notifyUrl: 'https://merchant.example/n', addressFrom: TRON_FROM },
        /^unknown fields: addressFrom, notifyUrl$/,
      ],
      ['a miscased member', { ...without(base, 'addressTo'), AddressTo: TRON_TO }, /^unknown field: AddressTo$/],
      ...EIP55.flatMap((address) =>
        (['ETH', 'BSC'] as const).map((chain): Row => [
          `${flipOneLetter(address)} (one letter's case flipped) on ${chain}`,
          { ...base, chainType: chain, addressTo: flipOneLetter(address) },
          EVM_RULE('addressTo'),
        ]),
      ),
      ['a TRON address on ETH', { ...base, chainType: 'ETH', addressTo: TRON_TO }, EVM_RULE('addressTo')],
      ['a TRON address on BSC', { ...base, chainType: 'BSC', addressTo: TRON_TO }, EVM_RULE('addressTo')],
      ['an EVM address on TRON', { ...base, chainType: 'TRON', addressTo: EIP55[0] }, TRON_RULE('addressTo')],
      ['a TRON address with one character changed', { ...base, addressTo: TRON_CHANGED }, TRON_RULE('addressTo')],
      ['a TRON address with version byte 0x42', { ...base, addressTo: TRON_WRONG_VERSION }, TRON_RULE('addressTo')],
      ['0x and 39 hex digits on ETH', { ...base, chainType: 'ETH', addressTo: EVM_39 }, EVM_RULE('addressTo')],
      ['0x and 41 hex digits on ETH', { ...base, chainType: 'ETH', addressTo: `${EVM_39}ab` }, EVM_RULE('addressTo')],
      [
        '40 hex digits without 0x on BSC',
        { ...base, chainType: 'BSC', addressTo: EIP55[0].slice(2) },
        EVM_RULE('addressTo'),
      ],
      ['an empty addressTo', { ...base, addressTo: '' }, /^addressTo must be at least 1 character long$/],
    ];
    const start = await footprint(merchant.merchantId);
    for (const [label, body, msgEn] of rows) {
      assertRefused(label, await call(TO_WALLET, body), msgEn);
      assert.deepEqual(await footprint(merchant.merchantId), start, `${label}: nothing written`);
    }
  });

  it('endpoint 2 accepts each EIP-55 vector on ETH and on BSC, and the limits themselves', async () => {
    for (const address of EIP55) {
      for (const chain of ['ETH', 'BSC'] as const) {
        const created = await call(
          TO_WALLET,
          fiatToToken({ chainType: chain, addressTo: address, currencyAmount: '1' }),
        );
        assertCreated(`${address} on ${chain}`, created);
        const record = (
          await call(QUERY_TO_WALLET, {
            externalOrderId: created.body.data.externalOrderId,
            orderId: created.body.data.orderId,
          })
        ).body.data;
        assert.equal(record.addressTo, address, 'kept as sent');
      }
    }
    assertCreated(
      'all lower case (no checksum)',
      await call(TO_WALLET, fiatToToken({ chainType: 'ETH', addressTo: EIP55[1].toLowerCase() })),
    );
    assertCreated('remark of 255 characters', await call(TO_WALLET, fiatToToken({ remark: 'r'.repeat(255) })));
    assertCreated(
      'externalOrderId of 64 characters',
      await call(TO_WALLET, fiatToToken({ externalOrderId: `${ext('x')}-`.padEnd(64, 'x') })),
    );
    assertCreated('currencyAmount the number 7', await call(TO_WALLET, fiatToToken({ currencyAmount: 7 })));
    assertCreated('no remark', await call(TO_WALLET, without(fiatToToken(), 'remark')));
  });

  it('endpoint 4 (token → fiat) refuses every body that breaks one rule, with a 300 naming the field, and burns no deposit address', async () => {
    const base = tokenToFiat();
    const rows: Row[] = [
      ...(['tokenAmount', 'chainType', 'addressFrom', 'currencyType', 'tokenType'] as const).map((field): Row => [
        `missing ${field}`,
        without(base, field),
        new RegExp(`^${field} is required$`),
      ]),
      ['tokenAmount a boolean', { ...base, tokenAmount: false }, /^tokenAmount must be a string or a number$/],
      ['tokenAmount null', { ...base, tokenAmount: null }, /^tokenAmount must be a string or a number$/],
      ['tokenAmount an array', { ...base, tokenAmount: [10] }, /^tokenAmount must be a string or a number$/],
      ['chainType a number', { ...base, chainType: 195 }, /^chainType must be one of TRON$/],
      ['addressFrom a number', { ...base, addressFrom: 123 }, /^addressFrom must be a string$/],
      ['currencyType a number', { ...base, currencyType: 986 }, /^currencyType must be one of BRL$/],
      ['tokenType a number', { ...base, tokenType: 1 }, /^tokenType must be one of USDT$/],
      ['externalOrderId a number', { ...base, externalOrderId: 42 }, /^externalOrderId must be a string$/],
      ['notifyUrl a number', { ...base, notifyUrl: 1 }, /^notifyUrl must be a string$/],
      ['remark a boolean', { ...base, remark: true }, /^remark must be a string$/],
      ['chainType ETH', { ...base, chainType: 'ETH' }, /^chainType must be one of TRON$/],
      ['chainType BSC', { ...base, chainType: 'BSC' }, /^chainType must be one of TRON$/],
      ['chainType in lower case', { ...base, chainType: 'tron' }, /^chainType must be one of TRON$/],
      ['currencyType MXN', { ...base, currencyType: 'MXN' }, /^currencyType must be one of BRL$/],
      ['currencyType USD', { ...base, currencyType: 'USD' }, /^currencyType must be one of BRL$/],
      ['tokenType USDC', { ...base, tokenType: 'USDC' }, /^tokenType must be one of USDT$/],
      ...['0', '1.1234567', '-1', '1e2', '', 'abc', '0.0000001', '+1', '.5', '9007199254.740992'].map((amount): Row => [
        `tokenAmount ${JSON.stringify(amount)}`,
        { ...base, tokenAmount: amount },
        AMOUNT_RULE.tokenAmount,
      ]),
      ...[0, -1, 1.1234567].map((amount): Row => [
        `tokenAmount the number ${amount}`,
        { ...base, tokenAmount: amount },
        AMOUNT_RULE.tokenAmount,
      ]),
      [
        'remark of 256 characters',
        { ...base, remark: 'r'.repeat(256) },
        /^remark must be at most 255 characters long$/,
      ],
      [
        'externalOrderId of 65 characters',
        { ...base, externalOrderId: 'e'.repeat(65) },
        /^externalOrderId must be at most 64 characters long$/,
      ],
      [
        'externalOrderId empty',
        { ...base, externalOrderId: '' },
        /^externalOrderId must be at least 1 character long$/,
      ],
      ['notifyUrl ftp://x', { ...base, notifyUrl: 'ftp://x' }, /^notifyUrl must be an http or https URL$/],
      [
        'notifyUrl not a URL',
        { ...base, notifyUrl: 'merchant.example/notify' },
        /^notifyUrl must be an http or https URL$/,
      ],
      ['an unknown member', { ...base, foo: 1 }, /^unknown field: foo$/],
      [
        'fiat → token members',
        { ...base, addressTo: TRON_TO, currencyAmount: '10' },
        /^unknown fields: addressTo, currencyAmount$/,
      ],
      ['an EVM address on TRON', { ...base, addressFrom: EIP55[0] }, TRON_RULE('addressFrom')],
      [
        'an all-lower-case EVM address on TRON',
        { ...base, addressFrom: EIP55[0].toLowerCase() },
        TRON_RULE('addressFrom'),
      ],
      ['a TRON address with one character changed', { ...base, addressFrom: TRON_CHANGED }, TRON_RULE('addressFrom')],
      ['a TRON address with version byte 0x42', { ...base, addressFrom: TRON_WRONG_VERSION }, TRON_RULE('addressFrom')],
      ['0x and 39 hex digits', { ...base, addressFrom: EVM_39 }, TRON_RULE('addressFrom')],
      ['an empty addressFrom', { ...base, addressFrom: '' }, /^addressFrom must be at least 1 character long$/],
      [
        'a token amount worth less than a centavo',
        { ...base, tokenAmount: '0.000001' },
        /^tokenAmount is too small: 0\.000001 USDT are worth 0\.00 BRL at 5\.4/,
      ],
    ];
    const start = await footprint(merchant.merchantId);
    for (const [label, body, msgEn] of rows) {
      assertRefused(label, await call(TO_FIAT, body), msgEn);
      assert.deepEqual(await footprint(merchant.merchantId), start, `${label}: nothing written`);
    }
    // The next successful create gets the very next address of the sandbox xpub: no refusal took an index.
    const created = await call(TO_FIAT, tokenToFiat());
    assertCreated('the next create', created);
    assert.equal(created.body.data.addressTo, tronAddressAt(SANDBOX_XPUBS.tron, start.nextAddressIndex));
    assert.equal(await nextAddressIndex(), start.nextAddressIndex + 1);
    assert.equal(await depositAddressCount(), start.depositAddresses + 1);
    assert.deepEqual(await balance(merchant.merchantId), start.balance, 'token → fiat freezes nothing');
  });

  it('endpoint 4 accepts the limits themselves', async () => {
    for (const [label, extra] of [
      ['tokenAmount with 6 decimals', { tokenAmount: '1.123456' }],
      ['tokenAmount the number 2.5', { tokenAmount: 2.5 }],
      ['remark of 255 characters', { remark: 'r'.repeat(255) }],
      ['externalOrderId of 64 characters', { externalOrderId: `${ext('x')}-`.padEnd(64, 'x') }],
      ['an http notifyUrl', { notifyUrl: 'http://merchant.example:8080/n?x=1' }],
    ] as const) {
      assertCreated(label, await call(TO_FIAT, tokenToFiat(extra)));
    }
    for (const field of ['externalOrderId', 'notifyUrl', 'remark'])
      assertCreated(`without ${field}`, await call(TO_FIAT, without(tokenToFiat(), field)));
  });

  it('no rate configured for MXN: a 300 that says so, and nothing written', async () => {
    const start = await footprint(merchant.merchantId);
    const mxn = await call(TO_WALLET, fiatToToken({ currencyType: 'MXN', chainType: 'ETH', addressTo: EIP55[0] }));
    assertRefused('MXN without a rate', mxn, /^no exchange rate is configured for MXN\/USDT/);
    assert.deepEqual(await footprint(merchant.merchantId), start);
    assert.deepEqual(await balance(merchant.merchantId, 'MXN'), { available: '0.00', frozen: '0.00' });
  });

  it('an amount the fee takes whole buys no token: a 300 "too small" that writes nothing', async () => {
    const start = await footprint(other.merchantId);
    for (const amount of ['1', '5']) {
      const refused = await call(TO_WALLET, fiatToToken({ currencyAmount: amount }), other.credentials);
      assertRefused(
        `currencyAmount ${amount} under a fixed fee of 5.00`,
        refused,
        new RegExp(
          `^currencyAmount is too small: ${amount}\\.00 BRL, less the fee of ${amount}\\.00(?: BRL)?, buys no USDT at 5\\.4321 BRL per token$`,
        ),
      );
      assert.deepEqual(await footprint(other.merchantId), start, `${amount}: nothing written`);
    }
    const t2f = await call(TO_FIAT, tokenToFiat({ tokenAmount: '0.5' }), other.credentials);
    assertRefused(
      'tokenAmount 0.5 under a fixed fee of 5.00',
      t2f,
      /^tokenAmount is too small: 0\.5 USDT are worth 2\.70 BRL at 5\.4, which the fee of 2\.70 BRL takes whole$/,
    );
    assert.deepEqual(
      await footprint(other.merchantId),
      start,
      'token → fiat: nothing written, no deposit address taken',
    );

    // 6.00 − 5.00 = 1.00 BRL at 5.4321: floor(100 · 10^6 · 10^8 / (543210000 · 100)) = 184090 units.
    const six = await call(TO_WALLET, fiatToToken({ currencyAmount: '6' }), other.credentials);
    assertCreated('currencyAmount 6', six);
    assert.equal((100n * 10n ** 6n * 10n ** 8n) / (543_210_000n * 100n), 184_090n);
    assert.match(six.text, /"tokenAmount":0\.18409[,}]/);
    assert.equal((await balance(other.merchantId)).frozen, '6.00');
  });

  it('a duplicate externalOrderId with a different body is a 300; an identical repeat returns the same data and writes nothing', async () => {
    const f2tBody = fiatToToken({ chainType: 'BSC', addressTo: EIP55[2], currencyAmount: '100' });
    const first = await call(TO_WALLET, f2tBody);
    assertCreated('the first fiat → token', first);
    const afterFirst = await footprint(merchant.merchantId);
    for (const [label, change] of [
      ['another amount', { currencyAmount: '101' }],
      ['another chain and address', { chainType: 'ETH' }],
      ['another remark', { remark: 'other' }],
      ['no remark', { remark: undefined }],
    ] as const) {
      const body = JSON.parse(JSON.stringify({ ...f2tBody, ...change })) as Body;
      assertRefused(
        `fiat → token, ${label}`,
        await call(TO_WALLET, body),
        new RegExp(`^externalOrderId ${String(f2tBody.externalOrderId)} was already used with a different request`),
      );
    }
    const repeat = await call(TO_WALLET, { ...f2tBody });
    assertCreated('the identical repeat', repeat);
    assert.deepEqual(repeat.body.data, first.body.data);
    const digits = (text: string) => /"tokenAmount":([0-9.]+)/.exec(text)?.[1];
    assert.equal(digits(repeat.text), digits(first.text), 'the repeat writes all 18 decimals as the first did');
    const reordered = Object.fromEntries(Object.entries(f2tBody).reverse());
    assert.deepEqual(
      (await call(TO_WALLET, reordered)).body.data,
      first.body.data,
      'member order does not make a request different',
    );
    assert.deepEqual(await footprint(merchant.merchantId), afterFirst, 'no second order, nothing more frozen');

    const t2fBody = tokenToFiat();
    const t2f = await call(TO_FIAT, t2fBody);
    assertCreated('the first token → fiat', t2f);
    const afterT2f = await footprint(merchant.merchantId);
    assertRefused(
      'token → fiat, another amount',
      await call(TO_FIAT, { ...t2fBody, tokenAmount: '11' }),
      new RegExp(`^externalOrderId ${String(t2fBody.externalOrderId)} was already used with a different request`),
    );
    const again = await call(TO_FIAT, t2fBody);
    assert.deepEqual(again.body.data, t2f.body.data, 'the same order, the same deposit address');
    assert.deepEqual(await footprint(merchant.merchantId), afterT2f, 'no second order, no second deposit address');

    // externalOrderId is unique per order kind: the other direction may use it.
    const sameIdOtherKind = await call(TO_FIAT, tokenToFiat({ externalOrderId: f2tBody.externalOrderId }));
    assertCreated('token → fiat with a fiat → token externalOrderId', sameIdOtherKind);
  });

  it("queries 3 and 5 find only the caller's order of their own direction named by both ids", async () => {
    const f2t = (await call(TO_WALLET, fiatToToken())).body.data;
    const t2f = (await call(TO_FIAT, tokenToFiat({ externalOrderId: f2t.externalOrderId }))).body.data;
    const othersF2t = (await call(TO_WALLET, fiatToToken({ currencyAmount: '20' }), other.credentials)).body.data;
    const othersT2f = (await call(TO_FIAT, tokenToFiat({ tokenAmount: '100' }), other.credentials)).body.data;
    for (const data of [f2t, t2f, othersF2t, othersT2f]) assert.equal(typeof data.orderId, 'string');

    for (const [path, mine, otherDirection, others] of [
      [QUERY_TO_WALLET, f2t, t2f, othersF2t],
      [QUERY_TO_FIAT, t2f, f2t, othersT2f],
    ] as const) {
      const ok = await call(path, { externalOrderId: mine.externalOrderId, orderId: mine.orderId });
      assert.deepEqual([ok.status, ok.body.code, ok.body.data.orderId], [200, '200', mine.orderId], path);
      const rows: Row[] = [
        [
          'a wrong orderId',
          { externalOrderId: mine.externalOrderId, orderId: `${String(mine.orderId).slice(0, -1)}Z` },
          ORDER_NOT_FOUND,
        ], // ids are upper-case hex: Z changes one
        [
          'an orderId that does not exist at all',
          { externalOrderId: mine.externalOrderId, orderId: 'nope' },
          ORDER_NOT_FOUND,
        ],
        [
          'a mismatched externalOrderId',
          { externalOrderId: `${String(mine.externalOrderId)}x`, orderId: mine.orderId },
          ORDER_NOT_FOUND,
        ],
        [
          "another order's externalOrderId",
          { externalOrderId: others.externalOrderId, orderId: mine.orderId },
          ORDER_NOT_FOUND,
        ],
        // f2t and t2f share an externalOrderId here, so only the direction is wrong.
        [
          'an order of the other direction',
          { externalOrderId: otherDirection.externalOrderId, orderId: otherDirection.orderId },
          ORDER_NOT_FOUND,
        ],
        [
          "another merchant's order",
          { externalOrderId: others.externalOrderId, orderId: others.orderId },
          ORDER_NOT_FOUND,
        ],
        ['missing orderId', { externalOrderId: mine.externalOrderId }, /^orderId is required$/],
        ['missing externalOrderId', { orderId: mine.orderId }, /^externalOrderId is required$/],
        ['orderId a number', { externalOrderId: mine.externalOrderId, orderId: 1 }, /^orderId must be a string$/],
        [
          'externalOrderId of 65 characters',
          { externalOrderId: 'e'.repeat(65), orderId: mine.orderId },
          /^externalOrderId must be at most 64 characters long$/,
        ],
        [
          'an unknown member',
          { externalOrderId: mine.externalOrderId, orderId: mine.orderId, orderStatus: 8 },
          /^unknown field: orderStatus$/,
        ],
      ];
      for (const [label, body, msgEn] of rows) assertRefused(`${path}: ${label}`, await call(path, body), msgEn);
    }
  });

  it('permissions: a key without exchange gets 301 on the creates; a query-only key can query; an exchange-only key cannot', async () => {
    const queryOnly = await keyFor(merchant.merchantId, ['query']);
    const exchangeOnly = await keyFor(merchant.merchantId, ['exchange']);
    const start = await footprint(merchant.merchantId);
    for (const [path, body] of [
      [TO_WALLET, fiatToToken()],
      [TO_FIAT, tokenToFiat()],
      [TO_WALLET, { nonsense: true }],
    ] as const) {
      const refused = await call(path, body, queryOnly);
      assert.deepEqual(
        [refused.status, refused.body.code, refused.body.success, refused.body.data],
        [403, '301', false, null],
        `${path} ${refused.text}`,
      );
      assert.match(refused.body.msgEn, /^API key lacks the permission exchange for this endpoint$/);
    }
    assert.deepEqual(await footprint(merchant.merchantId), start, 'nothing written');

    const f2t = await call(TO_WALLET, fiatToToken(), exchangeOnly);
    const t2f = await call(TO_FIAT, tokenToFiat(), exchangeOnly);
    assertCreated('fiat → token with an exchange-only key', f2t);
    assertCreated('token → fiat with an exchange-only key', t2f);
    for (const [path, data] of [
      [QUERY_TO_WALLET, f2t.body.data],
      [QUERY_TO_FIAT, t2f.body.data],
    ] as const) {
      const ids = { externalOrderId: data.externalOrderId, orderId: data.orderId };
      const found = await call(path, ids, queryOnly);
      assert.deepEqual(
        [found.status, found.body.code, found.body.data.orderId],
        [200, '200', data.orderId],
        `${path} with a query-only key`,
      );
      const denied = await call(path, ids, exchangeOnly);
      assert.deepEqual([denied.status, denied.body.code], [403, '301'], `${path} with an exchange-only key`);
      assert.match(denied.body.msgEn, /^API key lacks the permission query for this endpoint$/);
    }
  });

  it("fiat → token: the create result and the record have the spec's JSON types, before and after completion and on failure", async () => {
    for (const chain of ['TRON', 'BSC'] as const) {
      const body = fiatToToken({
        chainType: chain,
        addressTo: chain === 'TRON' ? TRON_TO : EIP55[3],
        currencyAmount: '10',
      });
      const created = await call(TO_WALLET, body);
      assertCreated(chain, created);
      assertShape(`${chain} create result`, created, FIAT_TO_TOKEN_RESULT);
      const data = created.body.data;
      assert.deepEqual(
        [data.symbolType, data.externalOrderId, data.currencyType, data.tokenType, data.chainType, data.currencyAmount],
        ['FIAT_TO_TOKEN', body.externalOrderId, 'BRL', 'USDT', chain, 10],
      );
      // (10.00 − 1 % fee) ÷ 5.4321, rounded down to the chain's decimals, written digit for digit.
      const decimals = chain === 'TRON' ? 6 : 18;
      const expected = (990n * 10n ** BigInt(decimals) * 10n ** 8n) / (543_210_000n * 100n);
      const ids = { externalOrderId: data.externalOrderId, orderId: data.orderId };

      const pending = await call(QUERY_TO_WALLET, ids);
      assertShape(`${chain} record at 1`, pending, FIAT_TO_TOKEN_RECORD);
      const before = pending.body.data;
      assert.equal(
        units(before.tokenAmount, decimals),
        expected,
        `${before.tokenAmount} is the quote to the last unit`,
      );
      assert.ok(
        created.text.includes(`"tokenAmount":${before.tokenAmount}`),
        "the create result writes the record's tokenAmount as a number",
      );
      assert.deepEqual(
        [
          before.orderStatus,
          before.currencyAmount,
          before.orderAmount,
          before.orderActualAmount,
          before.orderFee,
          before.orderPayTime,
          before.orderCompleteTime,
        ],
        [1, '10.00', '10.00', null, 0.1, null, null],
      );
      assert.deepEqual(
        [
          before.exSymbolType,
          before.exchangeRate,
          before.addressTo,
          before.remark,
          before.tradeHash,
          before.errorMsg,
          before.errorMsgEn,
        ],
        ['FIAT_TO_TOKEN', '5.4321', body.addressTo, 'rules', '', null, null],
      );

      assert.equal((await gw.sandbox(data.orderId, 'complete')).body.orderStatus, 8);
      const done = await call(QUERY_TO_WALLET, ids);
      assertShape(`${chain} record at 8`, done, FIAT_TO_TOKEN_RECORD);
      const after = done.body.data;
      assert.deepEqual(
        [after.orderStatus, after.orderActualAmount, after.orderFee, after.errorMsg, after.errorMsgEn],
        [8, 10, 0.1, null, null],
      );
      for (const time of [after.orderPayTime, after.orderCompleteTime]) assert.match(String(time), /^\d{13}$/);
      assert.ok(after.orderCompleteTime >= after.orderPayTime);
      assert.match(after.tradeHash, chain === 'TRON' ? /^[0-9a-f]{64}$/ : /^0x[0-9a-f]{64}$/);
    }

    const failing = (await call(TO_WALLET, fiatToToken())).body.data;
    await gw.sandbox(failing.orderId, 'failed');
    const failed = await call(QUERY_TO_WALLET, { externalOrderId: failing.externalOrderId, orderId: failing.orderId });
    assertShape('record at 32', failed, FIAT_TO_TOKEN_RECORD);
    assert.equal(failed.body.data.orderStatus, 32);
    assert.equal(typeof failed.body.data.errorMsg, 'string');
    assert.equal(typeof failed.body.data.errorMsgEn, 'string');
    assert.equal(failed.body.data.orderPayTime, null);
    assert.match(String(failed.body.data.orderCompleteTime), /^\d{13}$/);
  });

  it("token → fiat: the create result and the record have the spec's JSON types, before and after completion and on failure", async () => {
    const body = tokenToFiat({ tokenAmount: '12.5' });
    const created = await call(TO_FIAT, body);
    assertCreated('token → fiat', created);
    assertShape('create result', created, TOKEN_TO_FIAT_RESULT);
    const data = created.body.data;
    // 12.5 × 5.40 = 67.50; 0.5 % fee = 0.34 (rounded half up); 67.16 credited, 67 in whole units.
    assert.deepEqual(
      [
        data.symbolType,
        data.externalOrderId,
        data.currencyType,
        data.tokenType,
        data.chainType,
        data.currencyAmount,
        data.tokenAmount,
      ],
      ['TOKEN_TO_FIAT', body.externalOrderId, 'BRL', 'USDT', 'TRON', 67, 12.5],
    );
    assert.match(created.text, /"tokenAmount":12\.5[,}]/);
    assert.match(created.text, /"currencyAmount":67[,}]/);
    const ids = { externalOrderId: data.externalOrderId, orderId: data.orderId };

    const pending = await call(QUERY_TO_FIAT, ids);
    assertShape('record at 4', pending, TOKEN_TO_FIAT_RECORD);
    const before = pending.body.data;
    assert.deepEqual(
      [
        before.orderStatus,
        before.tokenAmount,
        before.currencyAmount,
        before.orderAmount,
        before.orderActualAmount,
        before.orderFee,
        before.orderPayTime,
        before.orderCompleteTime,
      ],
      [4, '12.5', '67.16', '67.50', null, null, null, null],
    );
    assert.deepEqual(
      [
        before.exSymbolType,
        before.exchangeRate,
        before.addressTo,
        before.notifyUrl,
        before.remark,
        before.tradeHash,
        before.errorMsg,
        before.errorMsgEn,
      ],
      ['TOKEN_TO_FIAT', '5.4', data.addressTo, body.notifyUrl, 'rules', '', null, null],
    );

    assert.equal((await gw.sandbox(data.orderId, 'complete')).body.orderStatus, 8);
    const done = await call(QUERY_TO_FIAT, ids);
    assertShape('record at 8', done, TOKEN_TO_FIAT_RECORD);
    const after = done.body.data;
    assert.deepEqual(
      [after.orderStatus, after.orderActualAmount, after.orderFee, after.errorMsg, after.errorMsgEn],
      [8, 67.16, '0.34', null, null],
    );
    for (const time of [after.orderPayTime, after.orderCompleteTime]) assert.match(String(time), /^\d{13}$/);
    assert.match(after.tradeHash, /^[0-9a-f]{64}$/);

    // Without notifyUrl and remark, both are still strings.
    const bare = (await call(TO_FIAT, without(without(tokenToFiat(), 'notifyUrl'), 'remark'))).body.data;
    await gw.sandbox(bare.orderId, 'failed');
    const failed = await call(QUERY_TO_FIAT, { externalOrderId: bare.externalOrderId, orderId: bare.orderId });
    assertShape('record at 32', failed, TOKEN_TO_FIAT_RECORD);
    assert.deepEqual([failed.body.data.orderStatus, failed.body.data.notifyUrl, failed.body.data.remark], [32, '', '']);
    assert.equal(typeof failed.body.data.errorMsgEn, 'string');
  });

  // BUG: DESIGN §1.10 accepts amounts "in plain decimal notation (no exponent, no sign)". The gateway
  // refuses the strings "1e3" and "1.0" for currencyAmount, but takes the JSON number 1e3 (as 1000),
  // the JSON number 10.0 (as 10) and the string " 10" (trimmed): parseDecimal reads a number by its
  // shortest text and trims strings (src/money.ts). Kept as a todo until the product decides.
  it('amounts written with an exponent or padded with spaces are refused, as JSON numbers and as strings', async () => {
    const raw = async (path: string, body: Body, from: string, to: string) => {
      const text = JSON.stringify(body).replace(from, to);
      assert.notEqual(text, JSON.stringify(body));
      return signedCall(gw.url, merchant.credentials, { path, body, rawBody: text }, gw.clock.now());
    };
    const start = await footprint(merchant.merchantId);
    assertRefused(
      'currencyAmount the JSON number 1e3',
      await raw(TO_WALLET, fiatToToken({ currencyAmount: 1000 }), '"currencyAmount":1000', '"currencyAmount":1e3'),
      AMOUNT_RULE.currencyAmount,
    );
    assertRefused(
      'currencyAmount the JSON number 10.0',
      await raw(TO_WALLET, fiatToToken({ currencyAmount: 10 }), '"currencyAmount":10', '"currencyAmount":10.0'),
      AMOUNT_RULE.currencyAmount,
    );
    assertRefused(
      'tokenAmount the JSON number 1e1',
      await raw(TO_FIAT, tokenToFiat({ tokenAmount: 10 }), '"tokenAmount":10', '"tokenAmount":1e1'),
      AMOUNT_RULE.tokenAmount,
    );
    assertRefused(
      'currencyAmount " 10"',
      await call(TO_WALLET, fiatToToken({ currencyAmount: ' 10' })),
      AMOUNT_RULE.currencyAmount,
    );
    assertRefused(
      'tokenAmount "10 "',
      await call(TO_FIAT, tokenToFiat({ tokenAmount: '10 ' })),
      AMOUNT_RULE.tokenAmount,
    );
    assert.deepEqual(await footprint(merchant.merchantId), start);
  });

  // The spec limits remark to 255 characters, and msgEn says "characters"; TypeBox alone would count
  // UTF-16 code units (string.length) and refuse 200 emoji as too long.
  it('remark is limited to 255 characters, not 255 UTF-16 code units', async () => {
    assertCreated('remark of 200 emoji', await call(TO_WALLET, fiatToToken({ remark: '😀'.repeat(200) })));
    assertCreated('remark of 255 emoji', await call(TO_FIAT, tokenToFiat({ remark: '😀'.repeat(255) })));
    assertRefused(
      'remark of 256 emoji',
      await call(TO_FIAT, tokenToFiat({ remark: '😀'.repeat(256) })),
      /^remark must be at most 255 characters long$/,
    );
  });
});
