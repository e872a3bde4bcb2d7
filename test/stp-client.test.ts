import assert from 'node:assert/strict';
import { createHash, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import {
  bankOfClabe,
  buildClabe,
  clabeBankCode,
  clabeCheckDigit,
  formatClabeForReading,
  isValidClabe,
  MX_BANKS,
} from '../src/rails/stp/clabe.js';
import {
  abonoReply,
  mexicoCityDate,
  montoToCentavos,
  parseAbono,
  parseCambioEstado,
  STP_RETURN_CAUSES,
  StpClient,
  StpError,
  stpOrderState,
  stpText,
  type StpOrdenRequest,
} from '../src/rails/stp/client.js';
import {
  cadenaConsultaFecha,
  cadenaConsultaOrden,
  cadenaConsultaRastreo,
  cadenaOriginalOrden,
  loadStpPrivateKey,
  ORDEN_FIELDNAMES,
  signCadena,
  verifyFirma,
} from '../src/rails/stp/firma.js';
import { startFakeStp, STP_TEST, stpGatewayEnv, stpTestKeys, type FakeStp } from './support/fake-stp.js';

// --- CLABE ------------------------------------------------------------------------------------------------------

describe('CLABE', () => {
  const valid = [
    '002010077777777771',
    '032180000118359719',
    '014027000005555558',
    '014028000005555557',
    '002010777777777770',
    '646180110400000007',
    '072691004495711499',
    '646180157036325892',
  ];

  it('accepts every valid vector of rails-2.md B.2', () => {
    for (const clabe of valid) assert.equal(isValidClabe(clabe), true, clabe);
  });

  it('refuses the checksum, length and character failures', () => {
    for (const clabe of ['002010077777777779', '12345678901234567', '00000000000000000a', '846180000500000009', '']) {
      assert.equal(isValidClabe(clabe), false, clabe);
    }
    assert.equal(isValidClabe(6461801570), false);
    assert.equal(isValidClabe(undefined), false);
  });

  it('passes the format of bank 000 and plaza 539 (format ok), but knows no bank 000', () => {
    assert.equal(isValidClabe('000000000000000000'), true);
    assert.equal(bankOfClabe('000000000000000000'), undefined);
    assert.equal(isValidClabe('002539016003269411'), true);
    assert.equal(bankOfClabe('002539016003269411')?.name, 'BANAMEX');
  });

  it('computes the worked check digits (sum 69 → 1; sum 78 → 2; the rollover to 0)', () => {
    assert.equal(clabeCheckDigit('00201007777777777'), 1);
    assert.equal(clabeCheckDigit('64618015703632589'), 2);
    assert.equal(clabeCheckDigit('00201077777777777'), 0);
    assert.throws(() => clabeCheckDigit('1234'), RangeError);
  });

  it('builds a CLABE from a 10-digit prefix and a 7-digit sequence', () => {
    assert.equal(buildClabe('6461801570', 3632589), '646180157036325892');
    assert.equal(buildClabe('6461801570', 3632589n), '646180157036325892');
    const first = buildClabe(STP_TEST.clabePrefix, 0);
    assert.equal(first.slice(0, 17), '64618015700000000');
    assert.ok(isValidClabe(first));
    assert.ok(isValidClabe(buildClabe(STP_TEST.clabePrefix, 9_999_999n)));
    assert.throws(() => buildClabe(STP_TEST.clabePrefix, 10_000_000), RangeError);
    assert.throws(() => buildClabe(STP_TEST.clabePrefix, 10_000_000n), RangeError);
    assert.throws(() => buildClabe(STP_TEST.clabePrefix, -1), RangeError);
    assert.throws(() => buildClabe(STP_TEST.clabePrefix, 1.5), RangeError);
    assert.throws(() => buildClabe('646180157', 1), RangeError);
    assert.throws(() => buildClabe('64618015701', 1), RangeError);
  });

  it('reads the bank, formats for reading and maps 3-digit codes to Banxico keys', () => {
    assert.equal(clabeBankCode('646180157036325892'), '646');
    assert.throws(() => clabeBankCode('6461'), RangeError);
    assert.equal(formatClabeForReading('646180157036325892'), '646 180 15703632589 2');
    assert.equal(formatClabeForReading('abc'), 'abc');
    const expected: Record<string, [string, string]> = {
      '002': ['40002', 'BANAMEX'],
      '012': ['40012', 'BBVA MEXICO'],
      '014': ['40014', 'SANTANDER'],
      '021': ['40021', 'HSBC'],
      '030': ['40030', 'BAJIO'],
      '036': ['40036', 'INBURSA'],
      '044': ['40044', 'SCOTIABANK'],
      '058': ['40058', 'BANREGIO'],
      '072': ['40072', 'BANORTE'],
      '127': ['40127', 'AZTECA'],
      '137': ['40137', 'BANCOPPEL'],
      '638': ['90638', 'NU MEXICO'],
      '646': ['90646', 'STP'],
      '706': ['90706', 'ARCUS'],
      '722': ['90722', 'MERCADO PAGO W'],
      '728': ['90728', 'SPIN BY OXXO'],
    };
    for (const [code3, [code5, name]] of Object.entries(expected)) {
      assert.deepEqual(MX_BANKS[code3], { code5, name }, code3);
      assert.equal(code5.slice(2), code3);
    }
    assert.deepEqual(bankOfClabe('646180157036325892'), { code3: '646', code5: '90646', name: 'STP' });
    assert.equal(bankOfClabe('072691004495711499')?.code5, '40072');
    assert.equal(bankOfClabe('002010077777777779'), undefined);
  });
});

// --- firma ------------------------------------------------------------------------------------------------------

const VECTOR = {
  cadena:
    '||40072|TAMIZI|||CR1564969083|90646|1.20|1|40||646180110400000007||40|Ricardo Sanchez|072691004495711499|ND||||||Prueba||||||5273144||T||3|0|||',
  sha256: '02522af73b28a42f76bdd81cc274fc877fbe2383a34983662cf3594b3ffc4b13',
  firma:
    'KDNKDVVuyNt9oTXPAlofGXGH5L5IH9PAzOsx0JZFtmGlU+10QRf2RHSg0OVCnYYpu5sC3DJ6vlXuYM40+uNw0tMc0y8Dv26uO8Vv2GhOhMqaGk72LwgwgmqVg17xzjgGbJHzAzMav3fx4/3No+mSnf7vxpe4ePf6yK1yU5U28L4=',
};
const VECTOR_FIELDS = {
  institucionContraparte: '40072',
  empresa: 'TAMIZI',
  claveRastreo: 'CR1564969083',
  institucionOperante: 90646,
  monto: 120n,
  tipoPago: 1,
  tipoCuentaOrdenante: 40,
  nombreOrdenante: null,
  cuentaOrdenante: '646180110400000007',
  rfcCurpOrdenante: null,
  tipoCuentaBeneficiario: 40,
  nombreBeneficiario: 'Ricardo Sanchez',
  cuentaBeneficiario: '072691004495711499',
  rfcCurpBeneficiario: 'ND',
  conceptoPago: 'Prueba',
  referenciaNumerica: 5273144,
  topologia: 'T',
  medioEntrega: 3,
  prioridad: 0,
  iva: null,
};
const VECTOR_PUBLIC_KEY = new URL('./fixtures/stp-vector-public.pem', import.meta.url);

describe('STP firma', () => {
  it('lists the 34 order fields in STP order', () => {
    assert.equal(ORDEN_FIELDNAMES.length, 34);
    assert.equal(ORDEN_FIELDNAMES[0], 'institucionContraparte');
    assert.equal(ORDEN_FIELDNAMES[6], 'monto');
    assert.equal(ORDEN_FIELDNAMES[33], 'iva');
  });

  it('builds the published cadena from its fields (143 bytes, its sha256)', () => {
    const cadena = cadenaOriginalOrden(VECTOR_FIELDS);
    assert.equal(cadena, VECTOR.cadena);
    assert.equal(Buffer.byteLength(cadena), 143);
    assert.equal(createHash('sha256').update(cadena).digest('hex'), VECTOR.sha256);
    // monto as pesos text or a JSON number gives the same bytes; never a float computation
    assert.equal(cadenaOriginalOrden({ ...VECTOR_FIELDS, monto: '1.2' }), VECTOR.cadena);
    assert.equal(cadenaOriginalOrden({ ...VECTOR_FIELDS, monto: 1.2 }), VECTOR.cadena);
    assert.equal(cadenaOriginalOrden({ ...VECTOR_FIELDS, monto: '1.20' }), VECTOR.cadena);
    assert.throws(() => cadenaOriginalOrden({ ...VECTOR_FIELDS, monto: '1.234' }), RangeError);
    assert.throws(() => cadenaOriginalOrden({ ...VECTOR_FIELDS, monto: 1e21 }), RangeError);
  });

  it('writes absent fields empty, 0 as 0, and amounts with two decimals', () => {
    const cadena = cadenaOriginalOrden({ monto: 100_000_005n, iva: '16', prioridad: 0 });
    const parts = cadena.slice(2, -2).split('|');
    assert.equal(parts.length, 34);
    assert.equal(parts[6], '1000000.05');
    assert.equal(parts[32], '0');
    assert.equal(parts[33], '16.00');
    assert.equal(parts[0], '');
  });

  it('the published firma verifies over the cadena Cashgate builds (the vector’s public key), and signing is deterministic', () => {
    // Only the public half of the published test key is kept (no private key in the repository):
    // PKCS#1 v1.5 is deterministic, so a match here means signing with that key reproduces the firma.
    const publicKey = createPublicKey(readFileSync(VECTOR_PUBLIC_KEY, 'utf8'));
    assert.equal(verifyFirma(cadenaOriginalOrden(VECTOR_FIELDS), VECTOR.firma, publicKey), true);
    assert.equal(verifyFirma(VECTOR.cadena.replace('1.20', '1.21'), VECTOR.firma, publicKey), false);
    assert.equal(verifyFirma(VECTOR.cadena, 'not base64!', publicKey), false);
    assert.equal(verifyFirma(VECTOR.cadena, undefined, publicKey), false);
    const keys = stpTestKeys();
    const key = loadStpPrivateKey(keys.privateKeyPem, keys.passphrase);
    assert.equal(signCadena(VECTOR.cadena, key), signCadena(VECTOR.cadena, key));
    assert.equal(verifyFirma(VECTOR.cadena, signCadena(VECTOR.cadena, key), keys.publicKey), true);
    assert.throws(
      () => loadStpPrivateKey(keys.privateKeyPem, 'wrong-passphrase'),
      (error: Error) => /could not be read/.test(error.message) && !error.message.includes('wrong-passphrase'),
    );
  });

  it('builds the query cadenas', () => {
    assert.equal(cadenaConsultaOrden('TAMIZI', 'CR1', 'E', '20230518'), '||TAMIZI|CR1|E|20230518||');
    assert.equal(cadenaConsultaOrden('TAMIZI', 'CR1', 'R'), '||TAMIZI|CR1|R|||');
    assert.equal(cadenaConsultaFecha('TAMIZI', 'E', '20200420'), `|||TAMIZI|20200420|||${'|'.repeat(30)}`);
    assert.equal(cadenaConsultaFecha('TAMIZI', 'R'), `|||TAMIZI||||${'|'.repeat(30)}`);
    assert.equal(
      cadenaConsultaRastreo('TAMIZI', { fechaOperacion: '20200420', claveRastreo: 'X', institucionOperante: 90646 }),
      `|||TAMIZI|20200420||X|90646${'|'.repeat(30)}`,
    );
  });
});

// --- money, dates, texts ----------------------------------------------------------------------------------------

describe('STP amounts, dates and texts', () => {
  it('reads pesos into centavos from the decimal text, never by float arithmetic', () => {
    const cases: [unknown, bigint | undefined][] = [
      ['123.45', 12_345n],
      ['0.01', 1n],
      ['0.10', 10n],
      ['12.5', 1_250n],
      ['7', 700n],
      [10.9, 1_090n],
      [1.2, 120n],
      [0.07, 7n],
      [99_999_999.99, 9_999_999_999n],
      [1_000_000.05, 100_000_005n],
      [0.1 + 0.2, undefined],
      ['1.234', undefined],
      ['-5.00', undefined],
      [-5, undefined],
      ['1e3', undefined],
      [1e21, undefined],
      [Number.NaN, undefined],
      ['', undefined],
      [null, undefined],
      [12n, undefined],
    ];
    for (const [input, expected] of cases) assert.equal(montoToCentavos(input), expected, String(input));
  });

  it('gives the calendar day in Mexico City by the tz database', () => {
    assert.equal(mexicoCityDate(Date.parse('2024-01-15T05:59:59Z')), '20240114');
    assert.equal(mexicoCityDate(Date.parse('2024-01-15T06:00:00Z')), '20240115');
    // Mexico City kept daylight saving time until October 2022: UTC−5 then, not a fixed −6.
    assert.equal(mexicoCityDate(Date.parse('2021-07-01T05:30:00Z')), '20210701');
    assert.equal(mexicoCityDate(Date.parse('2023-07-01T05:30:00Z')), '20230630');
  });

  it('maps STP state codes', () => {
    assert.equal(stpOrderState('LQ'), 'settled');
    for (const estado of ['CN', 'D', 'RB']) assert.equal(stpOrderState(estado), 'failed');
    for (const estado of ['A', 'L', 'PL', 'E', 'C', 'XD']) assert.equal(stpOrderState(estado), 'pending');
    assert.equal(stpOrderState('R', 'R'), 'pending');
    assert.equal(stpOrderState('TLQ', 'R'), 'settled');
    assert.equal(stpOrderState('XD', 'R'), 'failed');
  });

  it('makes texts ASCII without the separator, cut at 39', () => {
    assert.equal(stpText('José Peña | Ñandú'), 'Jose Pena Nandu');
    assert.equal(stpText('x'.repeat(50)).length, 39);
  });
});

// --- webhooks (pure) --------------------------------------------------------------------------------------------

describe('STP webhook bodies', () => {
  const camel = {
    id: 3191365,
    fechaOperacion: 20200127,
    institucionOrdenante: 90903,
    institucionBeneficiaria: 90646,
    claveRastreo: '12345',
    monto: 0.01,
    nombreOrdenante: 'STP',
    tipoCuentaOrdenante: 40,
    cuentaOrdenante: '846180000400000001',
    rfcCurpOrdenante: 'ND',
    nombreBeneficiario: 'NOMBRE_DE_BENEFICIARIO',
    tipoCuentaBeneficiario: 40,
    cuentaBeneficiario: '646180157036325892',
    rfcCurpBeneficiario: 'ND',
    conceptoPago: 'PRUEBA1',
    referenciaNumerica: 1234567,
    empresa: 'NOMBRE_EMPRESA',
    tipoPago: 1,
    tsLiquidacion: 1580140800000,
    folioCodi: 'f4c1111abd2b28a00abc',
  };
  const parsed = {
    id: '3191365',
    fechaOperacion: '20200127',
    institucionOrdenante: '90903',
    claveRastreo: '12345',
    monto: 1n,
    nombreOrdenante: 'STP',
    cuentaOrdenante: '846180000400000001',
    tipoCuentaOrdenante: 40,
    rfcCurpOrdenante: 'ND',
    cuentaBeneficiario: '646180157036325892',
    nombreBeneficiario: 'NOMBRE_DE_BENEFICIARIO',
    conceptoPago: 'PRUEBA1',
    referenciaNumerica: '1234567',
    empresa: 'NOMBRE_EMPRESA',
    tsLiquidacion: 1580140800000,
  };

  it('parses the camelCase abono (numbers or strings)', () => {
    assert.deepEqual(parseAbono(camel), parsed);
    const strings = Object.fromEntries(Object.entries(camel).map(([k, v]) => [k, String(v)]));
    assert.deepEqual(parseAbono(strings), parsed);
  });

  it('parses the older capitalised abono', () => {
    const capital = {
      Clave: 3191365,
      FechaOperacion: 20200127,
      InstitucionOrdenante: '90903',
      InstitucionBeneficiaria: '90646',
      ClaveRastreo: '12345',
      Monto: 0.01,
      NombreOrdenante: 'STP',
      TipoCuentaOrdenante: 40,
      CuentaOrdenante: '846180000400000001',
      RFCCurpOrdenante: 'ND',
      NombreBeneficiario: 'NOMBRE_DE_BENEFICIARIO',
      TipoCuentaBeneficiario: 40,
      CuentaBeneficiario: '646180157036325892',
      RFCCurpBeneficiario: 'ND',
      ConceptoPago: 'PRUEBA1',
      ReferenciaNumerica: 1234567,
      Empresa: 'NOMBRE_EMPRESA',
    };
    const rest = Object.fromEntries(Object.entries(parsed).filter(([key]) => key !== 'tsLiquidacion'));
    assert.deepEqual(parseAbono(capital), rest);
  });

  it('refuses an abono with a missing field or a bad amount', () => {
    for (const key of ['id', 'fechaOperacion', 'institucionOrdenante', 'claveRastreo', 'monto', 'cuentaBeneficiario']) {
      const body = Object.fromEntries(Object.entries(camel).filter(([name]) => name !== key));
      assert.equal(parseAbono(body), undefined, key);
    }
    for (const monto of [0, '0.00', -1, '1.234', 0.1 + 0.2, '1e2', 'abc', null]) {
      assert.equal(parseAbono({ ...camel, monto }), undefined, String(monto));
    }
    assert.equal(parseAbono({ ...camel, fechaOperacion: 20201345 }), undefined);
    assert.equal(parseAbono({ ...camel, id: 0 }), undefined);
    assert.equal(parseAbono('x'), undefined);
    assert.equal(parseAbono(null), undefined);
    assert.equal(parseAbono([camel]), undefined);
    assert.equal(parseAbono({ ...camel, monto: '1500.5' })?.monto, 150_050n);
  });

  it('parses both shapes of cambio de estado', () => {
    assert.deepEqual(
      parseCambioEstado({
        id: 12342912,
        empresa: 'INMAS',
        claveRastreo: 'ABC123',
        estado: 'D',
        causaDevolucion: 1,
        tsLiquidacion: 1_700_000_000_000,
      }),
      {
        id: '12342912',
        estado: 'D',
        claveRastreo: 'ABC123',
        causaDevolucion: 1,
        tsLiquidacion: 1_700_000_000_000,
        empresa: 'INMAS',
      },
    );
    assert.deepEqual(parseCambioEstado({ id: '12342912', estado: 'LQ', causaDevolucion: null }), {
      id: '12342912',
      estado: 'LQ',
    });
    assert.deepEqual(parseCambioEstado({ id: 55, Estado: 'LIQUIDACION', Detalle: '' }), { id: '55', estado: 'LQ' });
    assert.deepEqual(parseCambioEstado({ id: 55, Estado: 'DEVOLUCION', Detalle: 'cuenta inexistente' }), {
      id: '55',
      estado: 'D',
      detalle: 'cuenta inexistente',
    });
    assert.equal(parseCambioEstado({ id: 55, Estado: 'CANCELACION' })?.estado, 'CN');
    assert.equal(parseCambioEstado({ id: 0, estado: 'LQ' }), undefined);
    assert.equal(parseCambioEstado({ id: -3, estado: 'LQ' }), undefined);
    assert.equal(parseCambioEstado({ id: 55 }), undefined);
    assert.equal(parseCambioEstado('id=55'), undefined);
  });

  it('writes the abono replies and knows the return causes', () => {
    assert.deepEqual(abonoReply('confirmar'), { mensaje: 'confirmar' });
    assert.deepEqual(abonoReply('devolver', 1), { mensaje: 'devolver', id: 1 });
    assert.throws(() => abonoReply('devolver', 4), RangeError);
    assert.deepEqual(
      Object.keys(STP_RETURN_CAUSES).map(Number),
      [1, 2, 3, 5, 6, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 30, 31],
    );
    assert.equal(STP_RETURN_CAUSES[1], 'cuenta inexistente');
    assert.equal(STP_RETURN_CAUSES[13], 'beneficiario no reconoce el pago');
  });
});

// --- client against the local fake ------------------------------------------------------------------------------

interface Receiver {
  url: string;
  bodies: unknown[];
  /** what the next requests are answered (status, JSON body); the default answers 200 `fallback` */
  replies: { status: number; body: unknown }[];
  fallback: { status: number; body: unknown };
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    bodies: [],
    replies: [],
    fallback: { status: 200, body: { mensaje: 'recibido' } },
    close: async () => undefined,
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      receiver.bodies.push(text === '' ? undefined : JSON.parse(text));
      const reply = receiver.replies.shift() ?? receiver.fallback;
      response.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stp`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

async function rejects(promise: Promise<unknown>): Promise<StpError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof StpError, `expected an StpError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

async function until(condition: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) assert.fail('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('STP client against the local fake', () => {
  let fake: FakeStp;
  let client: StpClient;
  let registry: Registry;
  let orders: Receiver;
  let abonos: Receiver;
  let keys: ReturnType<typeof stpTestKeys>;
  let seq = 0;
  const cuentaOrdenante = buildClabe(STP_TEST.clabePrefix, 1);

  const orden = (overrides: Partial<StpOrdenRequest> = {}): StpOrdenRequest => {
    seq++;
    return {
      claveRastreo: `CG${Date.now().toString(36).toUpperCase()}${seq}`,
      monto: 12_34n + BigInt(seq),
      conceptoPago: 'Retiro Cashgate',
      cuentaBeneficiario: '072691004495711499',
      nombreBeneficiario: 'Ricardo Sánchez',
      institucionContraparte: '40072',
      cuentaOrdenante,
      referenciaNumerica: 5_273_144,
      ...overrides,
    };
  };

  before(async () => {
    keys = stpTestKeys();
    fake = await startFakeStp({
      publicKey: keys.publicKey,
      empresa: STP_TEST.empresa,
      webhookRetryMs: 20,
      maxWebhookTries: 4,
      settleMs: 20,
    });
    orders = await startReceiver();
    abonos = await startReceiver();
    abonos.fallback = { status: 200, body: abonoReply('confirmar') };
    fake.orderWebhookUrl = orders.url;
    fake.abonoWebhookUrl = abonos.url;
    registry = new Registry();
    client = new StpClient({
      baseUrl: `${fake.url}/speiws/rest`,
      queryUrl: fake.url,
      empresa: STP_TEST.empresa,
      privateKey: loadStpPrivateKey(keys.privateKeyPem, keys.passphrase),
      timeoutMs: 1000,
      registry,
    });
  });

  after(async () => {
    await client.close();
    await fake.close();
    await orders.close();
    await abonos.close();
  });

  it('gives a gateway environment on the fake', () => {
    const env = stpGatewayEnv(fake, 4321, '/tmp/stp.pem');
    assert.equal(env.MEXICO_SPEI_RAIL, 'stp');
    assert.equal(env.STP_BASE_URL, `${fake.url}/speiws/rest`);
    assert.equal(env.STP_QUERY_URL, fake.url);
    assert.equal(env.STP_EMPRESA, 'CASHGATE');
    assert.equal(env.STP_PRIVATE_KEY, '/tmp/stp.pem');
    assert.equal(env.STP_PRIVATE_KEY_PASSPHRASE, 'cashgate-test');
    assert.equal(env.STP_CLABE_PREFIX, '6461801570');
  });

  it('registers a payout: the folio, STP’s fields and firma, then LQ by webhook and by query', async () => {
    const request = orden({ monto: 1_000_000_05n });
    const { value, exchanges } = await client.registra(request);
    assert.ok(Number.isSafeInteger(value.folio) && value.folio > 0);
    assert.deepEqual(
      exchanges.map((e) => [e.operation, e.method, e.path, e.httpStatus, e.code]),
      [['registra', 'PUT', '/speiws/rest/ordenPago/registra', 200, 'ok']],
    );
    // the exchange keeps the amount as text and only the firma's start
    assert.equal((exchanges[0]?.request as any).monto, '1000000.05');
    assert.match((exchanges[0]?.request as any).firma, /…$/);
    // what STP received: the amount as a JSON number, the text made ASCII, STP's defaults
    const sent = fake.requests.at(-1)?.body;
    assert.equal(sent.monto, 1000000.05);
    assert.equal(sent.empresa, 'CASHGATE');
    assert.equal(sent.nombreBeneficiario, 'Ricardo Sanchez');
    assert.equal(sent.institucionOperante, '90646');
    assert.equal(sent.tipoCuentaBeneficiario, 40);
    assert.equal(sent.rfcCurpBeneficiario, 'ND');
    assert.equal(fake.orders.get(String(value.folio))?.estado, 'A');
    await fake.idle();
    const order = fake.orders.get(String(value.folio));
    assert.equal(order?.estado, 'LQ');
    assert.equal(order.monto, 1_000_000_05n);
    const change = parseCambioEstado(orders.bodies.at(-1));
    assert.deepEqual(
      { id: change?.id, estado: change?.estado, claveRastreo: change?.claveRastreo },
      { id: String(value.folio), estado: 'LQ', claveRastreo: request.claveRastreo },
    );
    const found = await client.consultaOrden({ claveRastreo: request.claveRastreo, tipoOrden: 'E' });
    assert.equal(found.value?.id, String(value.folio));
    assert.equal(found.value.state, 'settled');
    assert.equal(found.value.estado, 'LQ');
    assert.equal(found.value.monto, 1_000_000_05n);
    assert.equal(found.value.cuentaBeneficiario, '072691004495711499');
    assert.equal(found.value.fechaOperacion, mexicoCityDate(Date.now()));
    assert.ok((found.value.tsLiquidacion ?? 0) > 1_600_000_000_000);
    const metrics = await registry.getSingleMetricAsString('cashgate_stp_requests_total');
    assert.match(metrics, /operation="registra",outcome="ok"/);
    assert.match(metrics, /operation="consultaOrden",outcome="ok"/);
  });

  it('maps a reused claveRastreo to duplicate, and the first order is found by consultaOrden', async () => {
    const request = orden();
    const first = await client.registra(request);
    const error = await rejects(client.registra({ ...request, monto: request.monto + 1n }));
    assert.equal(error.kind, 'duplicate');
    assert.equal(error.code, '-1');
    assert.equal(error.stpCode, -1);
    assert.match(error.descripcion, /ya fue utilizada/);
    assert.equal(error.exchange.httpStatus, 200);
    const found = await client.consultaOrden({
      claveRastreo: request.claveRastreo,
      tipoOrden: 'E',
      fechaOperacion: mexicoCityDate(Date.now()),
    });
    assert.equal(found.value?.id, String(first.value.folio));
    assert.equal(found.value.monto, request.monto);
  });

  it('maps each refusal code to invalid, with its code and descripcionError', async () => {
    const cases: [string, Partial<StpOrdenRequest>, string, RegExp][] = [
      ['unknown institution', { institucionContraparte: '40999' }, '-9', /Institucion 40999 no es valida/],
      ['blocked institution', { institucionContraparte: '90642' }, '-9', /90642/],
      ['card type with a CLABE', { tipoCuentaBeneficiario: 3 }, '-11', /Tipo de cuenta/],
      ['zero amount', { monto: 0n }, '-20', /Monto/],
      ['negative amount', { monto: -100n }, '-20', /Monto/],
      ['CLABE of another bank', { institucionContraparte: '40012' }, '-22', /no coincide/],
      ['same account', { cuentaBeneficiario: cuentaOrdenante, institucionContraparte: '90646' }, '-24', /iguales/],
      ['bad claveRastreo', { claveRastreo: 'X'.repeat(30) }, '-34', /Clave de rastreo/],
      ['ordering account not ours', { cuentaOrdenante: buildClabe('6461801571', 1) }, '-7', /no existe/],
      ['missing name', { nombreBeneficiario: '  ' }, '0', /nombreBeneficiario es obligatorio/],
    ];
    for (const [label, overrides, code, message] of cases) {
      const error = await rejects(client.registra(orden(overrides)));
      assert.equal(error.kind, 'invalid', label);
      assert.equal(error.code, code, label);
      assert.equal(error.stpCode, Number(code), label);
      assert.match(error.descripcion, message, label);
    }
    fake.rejectPldNext();
    const pld = await rejects(client.registra(orden()));
    assert.deepEqual([pld.kind, pld.code, pld.descripcion], ['invalid', '-200', 'Se rechaza por PLD']);
  });

  it('maps a bad firma to invalid 0 "Error validando la firma"', async () => {
    const other = stpTestKeys();
    const stranger = new StpClient({
      ...client.config,
      privateKey: loadStpPrivateKey(other.privateKeyPem, other.passphrase),
      registry: undefined,
    });
    try {
      const error = await rejects(stranger.registra(orden()));
      assert.deepEqual([error.kind, error.code, error.descripcion], ['invalid', '0', 'Error validando la firma']);
      const query = await rejects(stranger.consultaOrden({ claveRastreo: 'CR1', tipoOrden: 'E' }));
      assert.equal(query.kind, 'invalid');
      const byDate = await rejects(stranger.ordenesPorFecha({ tipoOrden: 'E' }));
      assert.deepEqual([byDate.kind, byDate.code], ['invalid', '0']);
    } finally {
      await stranger.close();
    }
  });

  it('maps 5xx to unknown, 503 to busy, timeouts and resets to unknown; the order of a lost answer is found', async () => {
    fake.failNext('registra', 'server-error');
    const server = await rejects(client.registra(orden()));
    assert.deepEqual([server.kind, server.code, server.exchange.httpStatus], ['unknown', 'http-500', 500]);

    fake.failNext('registra', 'unavailable');
    const busy = await rejects(client.registra(orden()));
    assert.deepEqual([busy.kind, busy.code], ['busy', 'http-503']);

    const lost = orden();
    fake.failNext('registra', 'timeout-after');
    const timeout = await rejects(
      new StpClient({ ...client.config, timeoutMs: 200, registry: undefined }).registra(lost),
    );
    assert.deepEqual([timeout.kind, timeout.code, timeout.exchange.httpStatus], ['unknown', 'timeout', null]);
    // STP did register it: the caller asks before sending again, and does not send it again
    const found = await client.consultaOrden({ claveRastreo: lost.claveRastreo, tipoOrden: 'E' });
    assert.equal(found.value?.claveRastreo, lost.claveRastreo);
    const again = await rejects(client.registra(lost));
    assert.equal(again.kind, 'duplicate');

    const never = orden();
    fake.failNext('registra', 'timeout-before');
    const before = await rejects(
      new StpClient({ ...client.config, timeoutMs: 200, registry: undefined }).registra(never),
    );
    assert.equal(before.kind, 'unknown');
    assert.equal((await client.consultaOrden({ claveRastreo: never.claveRastreo, tipoOrden: 'E' })).value, undefined);

    fake.failNext('registra', 'reset');
    const reset = await rejects(client.registra(orden()));
    assert.equal(reset.kind, 'unknown');

    fake.delayNext('consultaOrden', 50);
    assert.equal((await client.consultaOrden({ claveRastreo: 'NOPE1', tipoOrden: 'E' })).value, undefined);
  });

  it('maps a refused connection to network', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const nowhere = new StpClient({
      ...client.config,
      baseUrl: `http://127.0.0.1:${port}/speiws/rest`,
      queryUrl: `http://127.0.0.1:${port}`,
      registry: undefined,
    });
    try {
      const error = await rejects(nowhere.registra(orden()));
      assert.deepEqual([error.kind, error.code, error.exchange.httpStatus], ['network', 'network', null]);
      const query = await rejects(nowhere.consultaOrden({ claveRastreo: 'X1', tipoOrden: 'E' }));
      assert.equal(query.kind, 'network');
    } finally {
      await nowhere.close();
    }
  });

  it('answers undefined for an unknown order and lists orders by date (-100 is an empty list)', async () => {
    const missing = await client.consultaOrden({ claveRastreo: 'DOESNOTEXIST1', tipoOrden: 'E' });
    assert.equal(missing.value, undefined);
    assert.equal(missing.exchanges[0]?.httpStatus, 400);
    assert.equal(missing.exchanges[0].code, 'not-found');
    const none = await client.ordenesPorFecha({ tipoOrden: 'E', fechaOperacion: '20200101' });
    assert.deepEqual(none.value, []);
    const sent = await client.ordenesPorFecha({ tipoOrden: 'E' });
    assert.ok(sent.value.length > 0);
    for (const order of sent.value) {
      assert.equal(typeof order.monto, 'bigint');
      assert.match(order.claveRastreo, /^CG/);
    }
    const request = fake.requests.at(-1);
    assert.equal(request?.path, '/speiws/rest/ordenPago/consOrdenesFech');
    assert.equal(request.body.estado, 'E');
  });

  it('reports a return (D with causa), a cancellation (CN), Shape B, and a held order resolved later', async () => {
    fake.nextOutcome({ estado: 'D', causaDevolucion: 1 });
    const returned = orden();
    const d = await client.registra(returned);
    await fake.idle();
    const change = orders.bodies.map(parseCambioEstado).find((c) => c?.id === String(d.value.folio));
    assert.deepEqual([change?.estado, change?.causaDevolucion], ['D', 1]);
    const dOrder = (await client.consultaOrden({ claveRastreo: returned.claveRastreo, tipoOrden: 'E' })).value;
    assert.deepEqual([dOrder?.estado, dOrder?.state, dOrder?.causaDevolucion], ['D', 'failed', 1]);

    fake.nextOutcome('CN');
    const cancelled = orden();
    await client.registra(cancelled);
    await fake.idle();
    const cnOrder = (await client.consultaOrden({ claveRastreo: cancelled.claveRastreo, tipoOrden: 'E' })).value;
    assert.deepEqual([cnOrder?.estado, cnOrder?.state], ['CN', 'failed']);

    fake.cambioEstadoShape = 'B';
    try {
      fake.nextOutcome('hold');
      const held = orden();
      const h = await client.registra(held);
      await fake.idle();
      const pending = (await client.consultaOrden({ claveRastreo: held.claveRastreo, tipoOrden: 'E' })).value;
      assert.deepEqual([pending?.estado, pending?.state], ['A', 'pending']);
      // the webhook fails twice, then is taken
      orders.replies.push({ status: 500, body: {} }, { status: 502, body: {} });
      const before = orders.bodies.length;
      fake.resolveOrder(h.value.folio, 'LQ');
      await fake.idle();
      assert.equal(orders.bodies.length - before, 3);
      const last = orders.bodies.at(-1) as Record<string, unknown>;
      assert.equal(last.Estado, 'LIQUIDACION');
      assert.deepEqual(parseCambioEstado(last), { id: String(h.value.folio), estado: 'LQ' });
    } finally {
      fake.cambioEstadoShape = 'A';
    }
  });

  it('delivers an abono until confirmed; the received order is LQ and settled', async () => {
    const clabe = buildClabe(STP_TEST.clabePrefix, 42);
    abonos.replies.push({ status: 500, body: {} }, { status: 200, body: { mensaje: 'gracias' } });
    const abono = await fake.sendAbono({ cuentaBeneficiario: clabe, monto: '123.45', claveRastreo: 'BBVA000111' });
    assert.equal(abono.outcome, 'confirmed');
    assert.deepEqual(
      abono.replies.map((r) => r.status),
      [500, 200, 200],
    );
    const body = parseAbono(abonos.bodies.at(-1));
    assert.equal(body?.id, abono.id);
    assert.equal(body.monto, 12_345n);
    assert.equal(body.cuentaBeneficiario, clabe);
    assert.equal(body.institucionOrdenante, '40012');
    assert.equal(body.claveRastreo, 'BBVA000111');
    assert.equal(body.fechaOperacion, mexicoCityDate(Date.now()));
    const received = (await client.consultaOrden({ claveRastreo: 'BBVA000111', tipoOrden: 'R' })).value;
    assert.deepEqual([received?.estado, received?.state, received?.monto], ['LQ', 'settled', 12_345n]);
    assert.equal(received?.institucionOrdenante, '40012');
    assert.equal(received.cuentaBeneficiario, clabe);
  });

  it('parses the capitalised abono the fake can send, the same as the camelCase one', async () => {
    const clabe = buildClabe(STP_TEST.clabePrefix, 43);
    await fake.sendAbono({ cuentaBeneficiario: clabe, monto: '0.10', casing: 'capital', claveRastreo: 'CAP1' });
    const raw = abonos.bodies.at(-1) as Record<string, unknown>;
    assert.ok('Clave' in raw && 'ClaveRastreo' in raw && !('claveRastreo' in raw));
    const body = parseAbono(raw);
    assert.deepEqual([body?.claveRastreo, body?.monto, body?.cuentaBeneficiario], ['CAP1', 10n, clabe]);
  });

  it('returns an abono on devolver: D with the causa', async () => {
    const clabe = buildClabe(STP_TEST.clabePrefix, 44);
    abonos.replies.push({ status: 200, body: abonoReply('devolver', 1) });
    const abono = await fake.sendAbono({ cuentaBeneficiario: clabe, monto: '50.00', claveRastreo: 'RET1' });
    assert.deepEqual([abono.outcome, abono.causaDevolucion], ['returned', 1]);
    const received = (await client.consultaOrden({ claveRastreo: 'RET1', tipoOrden: 'R' })).value;
    assert.deepEqual([received?.estado, received?.state, received?.causaDevolucion], ['D', 'failed', 1]);
  });

  it('leaves an unanswered abono R (pending) after maxWebhookTries; delivers duplicates; reveals a lost one by query', async () => {
    const clabe = buildClabe(STP_TEST.clabePrefix, 45);
    abonos.replies.push(...Array.from({ length: 4 }, () => ({ status: 503, body: {} })));
    const unanswered = await fake.sendAbono({ cuentaBeneficiario: clabe, monto: '9.99', claveRastreo: 'NOANS1' });
    assert.equal(unanswered.outcome, 'unanswered');
    assert.equal(unanswered.replies.length, 4);
    const pending = (await client.consultaOrden({ claveRastreo: 'NOANS1', tipoOrden: 'R' })).value;
    assert.deepEqual([pending?.estado, pending?.state], ['R', 'pending']);
    const again = await fake.redeliver(unanswered.id);
    assert.equal(again.outcome, 'confirmed');

    const before = abonos.bodies.length;
    const twice = await fake.sendAbono({
      cuentaBeneficiario: clabe,
      monto: '1.00',
      claveRastreo: 'DUP1',
      duplicate: true,
    });
    assert.equal(abonos.bodies.length - before, 2);
    assert.deepEqual(abonos.bodies.at(-1), abonos.bodies.at(-2));
    assert.equal(twice.outcome, 'confirmed');

    const count = abonos.bodies.length;
    const lost = await fake.sendAbono({ cuentaBeneficiario: clabe, monto: '77.70', claveRastreo: 'LOST1', lost: true });
    assert.equal(lost.outcome, 'lost');
    assert.equal(abonos.bodies.length, count);
    const received = await client.ordenesPorFecha({ tipoOrden: 'R' });
    const found = received.value.find((o) => o.claveRastreo === 'LOST1');
    assert.deepEqual([found?.estado, found?.monto, found?.cuentaBeneficiario], ['R', 7_770n, clabe]);
    await fake.redeliver(lost.id);
    await until(() => fake.orders.get(lost.id)?.estado === 'LQ');
  });
});
