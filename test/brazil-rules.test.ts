import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { hasError, isDynamicPix, isStaticPix, parsePix } from 'pix-utils';
import { computeCRC } from 'pix-utils/dist/main/crc.js';
import {
  generateBoleto,
  generateCnpj,
  generateCpf,
  getBoletoInfo,
  getPixPayloadInfo,
  isValidBoleto,
  isValidCnpj as oracleIsValidCnpj,
  isValidCpf as oracleIsValidCpf,
  isValidPixKey,
  isValidPixPayload,
} from '@brazilian-utils/brazilian-utils';
import { cnpj as cnpjOracle, cpf as cpfOracle } from 'cpf-cnpj-validator';
import validator from 'validator';
import { brCodeValue, crc16ccitt, dynamicBrCode, parseBrCode, staticBrCode } from '../src/rails/pix/br-code.js';
import {
  barcodeFromLinha,
  boletoBarcode,
  boletoBarcodeFields,
  dueDateFromFactor,
  dueFactor,
  formatLinhaDigitavel,
  isValidBarcode,
  isValidLinhaDigitavel,
  linhaDigitavel,
} from '../src/rails/boleto/boleto.js';
import { isValidCnpj, isValidCpf, normalizeDocument } from '../src/brazil/documents.js';
import { pixKeyProblem } from '../src/brazil/pix-keys.js';

// Check digits computed here on purpose, written apart from src, so the property tests do not grade our code with itself.
function cpfWithCheckDigits(base9: string): string {
  const dv = (digits: string): number => {
    const sum = digits.split('').reduce((acc, d, i) => acc + Number(d) * (digits.length + 1 - i), 0);
    const r = 11 - (sum % 11);
    return r >= 10 ? 0 : r;
  };
  const d1 = dv(base9);
  return `${base9}${d1}${dv(base9 + String(d1))}`;
}

function cnpjWithCheckDigits(base12: string): string {
  const dv = (chars: string): number => {
    let sum = 0;
    let weight = 2;
    for (let i = chars.length - 1; i >= 0; i--) {
      sum += (chars.charCodeAt(i) - 48) * weight;
      weight = weight === 9 ? 2 : weight + 1;
    }
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = dv(base12);
  return `${base12}${d1}${dv(base12 + String(d1))}`;
}

/** Every other digit in place of position `at`. */
function digitMutations(value: string, at: number): string[] {
  return '0123456789'
    .split('')
    .filter((d) => d !== value[at])
    .map((d) => value.slice(0, at) + d + value.slice(at + 1));
}

const isTaxId = (v: string): boolean => validator.isTaxID(v, 'pt-BR');

/** brazilian-utils works in local time: its dates are compared as local calendar days. */
function localDay(date: Date): string {
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

describe('Pix CRC16-CCITT-FALSE', () => {
  it('gives the standard check value 0x29B1 for "123456789"', () => assert.equal(crc16ccitt('123456789'), '29B1'));
  it('starts from 0xFFFF on empty input', () => assert.equal(crc16ccitt(''), 'FFFF'));
  it('keeps leading zeros to four hex digits', () => {
    const text = Array.from({ length: 5000 }, (_, i) => `x${i}`).find((t) => crc16ccitt(t).startsWith('0'));
    assert.ok(text !== undefined);
    assert.match(crc16ccitt(text), /^0[0-9A-F]{3}$/);
  });
  it('agrees with the table-driven CRC of pix-utils over the UTF-8 bytes of any text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 120 }).filter((t) => !/6304\w{4}$/.test(t)),
        (text) => {
          assert.equal(crc16ccitt(text), computeCRC(text));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('Pix BR Code reference vectors', () => {
  const vectors = [
    {
      name: 'BCB manual static EVP key',
      code: '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D',
      kind: 'static',
    },
    {
      name: 'older BCB dynamic with amount and txid',
      code: '00020101021226720014br.gov.bcb.pix2550bx.com.br/pix/8b3da2f3-9a41-40d1-a91a-bd93113bd4415204000053039865406123.455802BR5913Fulano de Tal6008BRASILIA62190515RP12345678-2019630445C8',
      kind: 'dynamic',
    },
    {
      name: 'static e-mail key with description and amount',
      code: '00020126650014br.gov.bcb.pix0119nubank@thalesog.com0220Gerado por Pix-Utils52040000530398654041.005802BR5914Thales Ogliari6009Sao Paulo62070503***63046069',
      kind: 'static',
    },
    {
      name: 'dynamic with https:// in the location',
      code: '00020126540014br.gov.bcb.pix2532https://pix.thalesogliari.com.br5204000053039865802BR5914Thales Ogliari6009SAO PAULO62070503***63043FD3',
      kind: 'dynamic',
    },
    {
      name: 'BCB-style dynamic with uppercase GUI',
      code: '00020101021226770014BR.GOV.BCB.PIX2555pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a995204000053039865802BR5907EMPRESA6009SAO PAULO62070503***6304EEAB',
      kind: 'dynamic',
    },
    {
      name: 'CPF key, amount and txid',
      code: '00020126330014br.gov.bcb.pix011112345678909520400005303986540510.005802BR5912LOJA EXEMPLO6009SAO PAULO62130509PEDIDO1236304BB55',
      kind: 'static',
    },
    {
      name: 'phone key with description',
      code: '00020126490014br.gov.bcb.pix0114+55119999988880209Pedido 4252040000530398654071234.565802BR5912LOJA EXEMPLO6009SAO PAULO62080504TX4263042999',
      kind: 'static',
    },
    {
      name: 'dynamic location',
      code: '00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca255204000053039865802BR5912LOJA EXEMPLO6009SAO PAULO62070503***6304FEA4',
      kind: 'dynamic',
    },
  ] as const;
  for (const { name, code, kind } of vectors) {
    it(`${name}: CRC ${code.slice(-4)} recomputes and the code parses as ${kind}`, () => {
      assert.equal(crc16ccitt(code.slice(0, -4)), code.slice(-4));
      const parsed = parseBrCode(code);
      assert.ok(parsed.crcValid);
      assert.equal(brCodeValue(parsed, '26', '00')?.toLowerCase(), 'br.gov.bcb.pix');
      assert.equal(brCodeValue(parsed, '26', kind === 'static' ? '01' : '25') !== undefined, true);
      const pix = parsePix(code);
      assert.ok(!hasError(pix), hasError(pix) ? pix.message : '');
      assert.equal(kind === 'static' ? isStaticPix(pix) : isDynamicPix(pix), true);
    });
  }
  it('reproduces the generated static CPF vector exactly', () => {
    assert.equal(
      staticBrCode({
        pixKey: '12345678909',
        merchantName: 'Loja Exemplo',
        merchantCity: 'São Paulo',
        amount: '10.00',
        txid: 'PEDIDO123',
      }),
      vectors[5].code,
    );
  });
  it('reproduces the generated static phone vector exactly', () => {
    assert.equal(
      staticBrCode({
        pixKey: '+5511999998888',
        merchantName: 'LOJA EXEMPLO',
        merchantCity: 'SAO PAULO',
        amount: '1234.56',
        txid: 'TX42',
        description: 'Pedido 42',
      }),
      vectors[6].code,
    );
  });
  it('reproduces the generated dynamic vector exactly', () => {
    assert.equal(
      dynamicBrCode({
        locationUrl: 'pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25',
        merchantName: 'Loja Exemplo',
        merchantCity: 'Sao Paulo',
      }),
      vectors[7].code,
    );
  });
  it('reads the fields of the older BCB dynamic example', () => {
    const parsed = parseBrCode(vectors[1].code);
    assert.equal(brCodeValue(parsed, '01'), '12');
    assert.equal(brCodeValue(parsed, '26', '25'), 'bx.com.br/pix/8b3da2f3-9a41-40d1-a91a-bd93113bd441');
    assert.equal(brCodeValue(parsed, '54'), '123.45');
    assert.equal(brCodeValue(parsed, '62', '05'), 'RP12345678-2019');
    assert.equal(brCodeValue(parsed, '59'), 'Fulano de Tal');
  });
  it('agrees with brazilian-utils on the BCB manual example', () => assert.ok(isValidPixPayload(vectors[0].code)));
});

describe('Pix BR Code generation', () => {
  it('writes fields in order with 000201 first and 6304 + CRC last, static without 01', () => {
    const code = staticBrCode({ pixKey: 'pix@bcb.gov.br', merchantName: 'Cashgate Loja', merchantCity: 'Brasília' });
    assert.ok(code.startsWith('000201'));
    assert.ok(!code.startsWith('0002010102'));
    assert.deepEqual(
      parseBrCode(code).fields.map((f) => f.id),
      ['00', '26', '52', '53', '58', '59', '60', '62', '63'],
    );
    assert.equal(brCodeValue(parseBrCode(code), '62', '05'), '***');
    assert.equal(brCodeValue(parseBrCode(code), '60'), 'BRASILIA');
  });
  it('marks dynamic codes 01 = 12 and carries the location in 26.25', () => {
    const parsed = parseBrCode(
      dynamicBrCode({
        locationUrl: 'pix.cashgate.example/qr/v2/abc',
        merchantName: 'X',
        merchantCity: 'Y',
        amount: '5.00',
      }),
    );
    assert.deepEqual(
      parsed.fields.map((f) => f.id),
      ['00', '01', '26', '52', '53', '54', '58', '59', '60', '62', '63'],
    );
    assert.equal(brCodeValue(parsed, '01'), '12');
    assert.equal(brCodeValue(parsed, '26', '25'), 'pix.cashgate.example/qr/v2/abc');
    assert.equal(brCodeValue(parsed, '26', '01'), undefined);
    assert.equal(brCodeValue(parsed, '62', '05'), '***');
  });
  it('uppercases name and city, removes accents and truncates to 25 and 15 characters', () => {
    const parsed = parseBrCode(
      staticBrCode({
        pixKey: '12345678909',
        merchantName: 'Pão de Açúcar Comércio de Alimentos',
        merchantCity: 'São José dos Campos',
      }),
    );
    assert.equal(brCodeValue(parsed, '59'), 'PAO DE ACUCAR COMERCIO DE');
    assert.equal(brCodeValue(parsed, '60'), 'SAO JOSE DOS CA');
  });
  it('refuses a Pix key over 77 characters', () => {
    assert.throws(() => staticBrCode({ pixKey: 'a'.repeat(78), merchantName: 'X', merchantCity: 'Y' }), {
      name: 'RangeError',
      message: 'pixKey is 78 characters; a Pix key has at most 77',
    });
    assert.doesNotThrow(() => staticBrCode({ pixKey: 'a'.repeat(77), merchantName: 'X', merchantCity: 'Y' }));
  });
  it('refuses a description that would push template 26 past 99 bytes', () => {
    const key = '123e4567-e12b-12d1-a456-426655440000';
    const room = 99 - 18 - (4 + key.length) - 4;
    assert.doesNotThrow(() =>
      staticBrCode({ pixKey: key, merchantName: 'X', merchantCity: 'Y', description: 'd'.repeat(room) }),
    );
    assert.throws(
      () => staticBrCode({ pixKey: key, merchantName: 'X', merchantCity: 'Y', description: 'd'.repeat(room + 1) }),
      {
        name: 'RangeError',
        message: `description is ${room + 1} characters; with this Pix key at most ${room} fit in the 99-byte template 26`,
      },
    );
  });
  it('refuses a location over 77 characters or with a scheme', () => {
    assert.throws(
      () => dynamicBrCode({ locationUrl: `pix.example.com/${'q'.repeat(62)}`, merchantName: 'X', merchantCity: 'Y' }),
      {
        name: 'RangeError',
        message: 'locationUrl is 78 characters; at most 77 fit',
      },
    );
    assert.throws(
      () => dynamicBrCode({ locationUrl: 'https://pix.example.com/qr/1', merchantName: 'X', merchantCity: 'Y' }),
      /without a scheme/,
    );
  });
  it('refuses amounts that are not reais with two decimals', () => {
    for (const amount of ['10', '10.0', '10,00', '-1.00', '01.00', '0.00', '12345678901.00', '1e3']) {
      assert.throws(
        () => staticBrCode({ pixKey: '12345678909', merchantName: 'X', merchantCity: 'Y', amount }),
        RangeError,
        amount,
      );
    }
  });
  it('refuses a txid outside [A-Za-z0-9]{1,25}', () => {
    for (const txid of ['', 'PEDIDO-1', 'x'.repeat(26), 'pedido 1']) {
      assert.throws(
        () => staticBrCode({ pixKey: '12345678909', merchantName: 'X', merchantCity: 'Y', txid }),
        /txid must be 1 to 25 letters or digits/,
      );
    }
  });
  it('refuses a name with nothing left after normalisation', () => {
    assert.throws(
      () => staticBrCode({ pixKey: '12345678909', merchantName: '  ', merchantCity: 'Y' }),
      /merchantName must have at least one ASCII character/,
    );
  });

  const name = fc
    .string({
      unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzãçéíóúâêô ABCXYZ0123'.split('')),
      minLength: 1,
      maxLength: 40,
    })
    .filter((s) => s.trim() !== '');
  const amount = fc
    .bigInt({ min: 1n, max: 99_999_999_999n })
    .map((c) => `${c / 100n}.${String(c % 100n).padStart(2, '0')}`);
  const txid = fc.stringMatching(/^[A-Za-z0-9]{1,25}$/);
  const pixKey = fc.oneof(
    fc.stringMatching(/^\d{9}$/).map(cpfWithCheckDigits),
    fc.uuid(),
    fc.stringMatching(/^\+55[1-9][1-9]9\d{8}$/),
    fc.stringMatching(/^[a-z0-9]{1,20}@[a-z0-9]{1,20}\.com$/),
  );
  it('static codes are read back by pix-utils and brazilian-utils with key, amount and txid as given', () => {
    fc.assert(
      fc.property(
        pixKey,
        name,
        name,
        fc.option(amount, { nil: undefined }),
        fc.option(txid, { nil: undefined }),
        (key, merchantName, merchantCity, value, ref) => {
          const code = staticBrCode({ pixKey: key, merchantName, merchantCity, amount: value, txid: ref });
          assert.ok(parseBrCode(code).crcValid);
          const pix = parsePix(code);
          assert.ok(!hasError(pix), hasError(pix) ? pix.message : '');
          assert.ok(isStaticPix(pix));
          assert.equal(pix.pixKey, key);
          assert.equal(pix.txid, ref ?? '***');
          assert.equal(pix.transactionAmount, value === undefined ? 0 : Number(value));
          assert.ok(isValidPixPayload(code));
          const info = getPixPayloadInfo(code);
          assert.ok(info !== null);
          assert.equal(info.key, key);
          assert.equal(info.pointOfInitiation, 'static');
          assert.equal(info.txid, ref);
          assert.equal(info.amount, value === undefined ? undefined : Number(value));
        },
      ),
    );
  });
  it('dynamic codes are read back by pix-utils and brazilian-utils with the location as given', () => {
    const location = fc.stringMatching(/^pix\.[a-z]{1,12}\.com\.br\/qr\/v2\/[a-z0-9]{1,40}$/);
    fc.assert(
      fc.property(location, name, name, (url, merchantName, merchantCity) => {
        const code = dynamicBrCode({ locationUrl: url, merchantName, merchantCity });
        const pix = parsePix(code);
        assert.ok(!hasError(pix), hasError(pix) ? pix.message : '');
        assert.ok(isDynamicPix(pix));
        assert.equal(pix.url, url);
        const info = getPixPayloadInfo(code);
        assert.ok(info !== null);
        assert.equal(info.url, url);
        assert.equal(info.pointOfInitiation, 'dynamic');
      }),
    );
  });
  it('any changed character of a generated code is caught by the CRC or the TLV reader', () => {
    const code = staticBrCode({
      pixKey: '12345678909',
      merchantName: 'Loja',
      merchantCity: 'Rio',
      amount: '9.90',
      txid: 'A1',
    });
    fc.assert(
      fc.property(fc.nat({ max: code.length - 5 }), fc.constantFrom(...'0123456789ABCXYZ*.'.split('')), (at, ch) => {
        fc.pre(code[at] !== ch);
        const mutated = code.slice(0, at) + ch + code.slice(at + 1);
        let valid: boolean;
        try {
          valid = parseBrCode(mutated).crcValid;
        } catch {
          valid = false;
        }
        assert.equal(valid, false);
      }),
    );
  });
});

describe('Pix BR Code reader', () => {
  const good =
    '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D';
  it('builds the nested tree of templates 26 and 62', () => {
    const parsed = parseBrCode(good);
    assert.deepEqual(parsed.fields[1], {
      id: '26',
      value: '0014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-426655440000',
      fields: [
        { id: '00', value: 'br.gov.bcb.pix' },
        { id: '01', value: '123e4567-e12b-12d1-a456-426655440000' },
      ],
    });
    assert.equal(brCodeValue(parsed, '62', '05'), '***');
  });
  it('reports a wrong CRC without throwing', () =>
    assert.equal(parseBrCode(`${good.slice(0, -4)}1D3E`).crcValid, false));
  it('counts lengths in UTF-8 bytes', () => {
    const body = '000201' + '5902ã' + '6304';
    const parsed = parseBrCode(body + crc16ccitt(body));
    assert.equal(brCodeValue(parsed, '59'), 'ã');
    assert.ok(parsed.crcValid);
  });
  for (const [label, code, message] of [
    ['a length running past the end', '000201269912', /claims 99 bytes/],
    ['a non-numeric length', '0002012A0512345', /non-numeric ID or length/],
    ['stray bytes at the end', `${good}12`, /stray bytes/],
    ['a first field other than 000201', good.slice(6), /must start with field 00/],
    ['no CRC field at the end', good.slice(0, -8), /must end with field 63/],
    ['a CRC that is not hex', `${good.slice(0, -4)}XYZW`, /4-hex-digit CRC/],
    ['a repeated field', `000201${'5802BR'.repeat(2)}63040000`, /repeats field 58/],
    ['a malformed template', '0002012603ABC63040000', /template 26/],
  ] as const) {
    it(`rejects ${label}`, () => assert.throws(() => parseBrCode(code), { name: 'SyntaxError', message }));
  }
});

describe('boleto fator de vencimento', () => {
  it('restarts at 1000 on 2025-02-22 and reaches 9999 on 2049-10-13', () => {
    assert.equal(dueFactor('2025-02-22'), 1000);
    assert.equal(dueFactor('2049-10-13'), 9999);
  });
  it('gives 1312 for 2025-12-31 and 1386 for 2026-03-15', () => {
    assert.equal(dueFactor('2025-12-31'), 1312);
    assert.equal(dueFactor('2026-03-15'), 1386);
  });
  it('refuses dates outside the current cycle', () => {
    assert.throws(() => dueFactor('2025-02-21'), { name: 'RangeError', message: /outside 2025-02-22\.\.2049-10-13/ });
    assert.throws(() => dueFactor('2049-10-14'), RangeError);
  });
  it('refuses malformed and impossible dates', () => {
    assert.throws(() => dueFactor('2025-2-3'), /YYYY-MM-DD/);
    assert.throws(() => dueFactor('2025-02-30'), /not a calendar date/);
  });
  it('reads a fator as the date closest to the reference day', () => {
    assert.equal(dueDateFromFactor(1000, '2001-01-01'), '2000-07-03');
    assert.equal(dueDateFromFactor(9999, '2025-01-01'), '2025-02-21');
    assert.equal(dueDateFromFactor(1000, '2025-03-01'), '2025-02-22');
    assert.equal(dueDateFromFactor(9999, '2049-01-01'), '2049-10-13');
    assert.equal(dueDateFromFactor(7586, '2018-07-01'), '2018-07-15');
    assert.equal(dueDateFromFactor(3737, '2008-01-10'), '2007-12-31');
    assert.equal(dueDateFromFactor(1312, '2025-11-01'), '2025-12-31');
    assert.equal(dueDateFromFactor(0, '2025-11-01'), undefined);
    assert.throws(() => dueDateFromFactor(999, '2025-11-01'), RangeError);
  });
  it('encodes and decodes every date of the cycle alike', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 8999 }), (days) => {
        const date = new Date(Date.UTC(2025, 1, 22) + days * 86_400_000).toISOString().slice(0, 10);
        assert.equal(dueFactor(date), 1000 + days);
        assert.equal(dueDateFromFactor(1000 + days, date), date);
      }),
    );
  });
});

describe('boleto barcode and linha digitável, worked examples', () => {
  const bbLine = '00190000090114971860168524522114675860000102656';
  const bbBarcode = '00196758600001026560000001149718606852452211';
  it('Banco do Brasil fixture: line and barcode convert both ways', () => {
    assert.equal(barcodeFromLinha(bbLine), bbBarcode);
    assert.equal(linhaDigitavel(bbBarcode), bbLine);
    assert.ok(isValidLinhaDigitavel(bbLine));
    assert.ok(isValidBarcode(bbBarcode));
  });
  it('Banco do Brasil fixture: bank 001, DAC 6, fator 7586 (2018-07-15), R$ 1.026,56', () => {
    const fields = boletoBarcodeFields(bbBarcode);
    assert.deepEqual(fields, {
      bankCode: '001',
      currency: '9',
      checkDigit: 6,
      dueFactor: 7586,
      amountCents: 102656n,
      freeField: '0000001149718606852452211',
    });
    assert.equal(dueDateFromFactor(fields.dueFactor, '2018-06-01'), '2018-07-15');
  });
  it('rejects the known-bad mutation with a wrong mod 10', () => {
    assert.equal(isValidLinhaDigitavel('00190000020114971860168524522114675860000102656'), false);
    assert.throws(() => barcodeFromLinha('00190000020114971860168524522114675860000102656'), /mod-10/);
  });
  it('second fixture: fator 3737 (2007-12-31), R$ 1,00', () => {
    const line = '00190500954014481606906809350314337370000000100';
    assert.ok(isValidLinhaDigitavel(line));
    const fields = boletoBarcodeFields(barcodeFromLinha(line));
    assert.equal(fields.dueFactor, 3737);
    assert.equal(fields.amountCents, 100n);
    assert.equal(dueDateFromFactor(fields.dueFactor, '2008-01-15'), '2007-12-31');
    assert.equal(linhaDigitavel(barcodeFromLinha(line)), line);
  });
  it('synthetic Itaú-style boleto: weighted sum 671, DAC 1 by the edge rule', () => {
    const withoutDac = '3419' + '1312' + '0000015000' + '1091234567880057123451000';
    assert.equal(withoutDac.length, 43);
    const sum = withoutDac
      .split('')
      .reverse()
      .reduce((acc, d, i) => acc + Number(d) * (2 + (i % 8)), 0);
    assert.equal(sum, 671);
    assert.equal(sum % 11, 0);
    const barcode = boletoBarcode({
      bankCode: '341',
      dueDate: '2025-12-31',
      amountCents: 15000,
      freeField: '1091234567880057123451000',
    });
    assert.equal(barcode, '34191131200000150001091234567880057123451000');
    assert.equal(barcode[4], '1');
  });
  it('synthetic Itaú-style boleto: field 1 DV 3, line and printed form', () => {
    const line = linhaDigitavel('34191131200000150001091234567880057123451000');
    assert.equal(line.slice(0, 10), '3419109123');
    assert.equal(line, '34191091233456788005871234510007113120000015000');
    assert.equal(formatLinhaDigitavel(line), '34191.09123 34567.880058 71234.510007 1 13120000015000');
    assert.equal(barcodeFromLinha(formatLinhaDigitavel(line)), '34191131200000150001091234567880057123451000');
  });
  it('synthetic Bradesco-style boleto: DAC 4 and its line', () => {
    const barcode = boletoBarcode({
      bankCode: '237',
      dueDate: '2026-03-15',
      amountCents: 123456n,
      freeField: '3381234567890123456789012',
    });
    assert.equal(barcode, '23794138600001234563381234567890123456789012');
    assert.equal(linhaDigitavel(barcode), '23793381283456789012334567890123413860000123456');
  });
  it('leaves the 48-digit arrecadação format to another reader', () => {
    const arrecadacao = '846100000005246100291102005460339004695895061080';
    assert.equal(isValidLinhaDigitavel(arrecadacao), false);
    assert.ok(isValidBoleto(arrecadacao));
  });
  it('is accepted by brazilian-utils, which decodes bank, amount and due date alike', () => {
    for (const line of [
      bbLine,
      '34191091233456788005871234510007113120000015000',
      '23793381283456789012334567890123413860000123456',
    ]) {
      assert.ok(isValidBoleto(line), line);
    }
    const info = getBoletoInfo('34191091233456788005871234510007113120000015000', {
      referenceDate: new Date(2025, 11, 1),
    });
    assert.ok(info !== null);
    assert.equal(info.bankCode, '341');
    assert.equal(info.amount, 15000);
    assert.ok(info.expirationDate !== null);
    assert.equal(localDay(info.expirationDate), '2025-12-31');
  });
});

describe('boleto inputs', () => {
  const base = { bankCode: '341', dueDate: '2025-12-31', amountCents: 15000, freeField: '1091234567880057123451000' };
  it('refuses a bank code that is not three digits', () =>
    assert.throws(() => boletoBarcode({ ...base, bankCode: '34' }), /3-digit COMPE/));
  it('refuses a campo livre that is not 25 digits', () =>
    assert.throws(() => boletoBarcode({ ...base, freeField: '1'.repeat(24) }), /freeField must be 25 digits/));
  it('refuses fractional, negative and over-ten-digit amounts', () => {
    for (const amountCents of [10.5, -1, 10_000_000_000, -1n, 10_000_000_000n]) {
      assert.throws(() => boletoBarcode({ ...base, amountCents }), RangeError, String(amountCents));
    }
  });
  it('accepts zero and the largest ten-digit amount', () => {
    assert.equal(boletoBarcodeFields(boletoBarcode({ ...base, amountCents: 0 })).amountCents, 0n);
    assert.equal(
      boletoBarcodeFields(boletoBarcode({ ...base, amountCents: 9_999_999_999n })).amountCents,
      9_999_999_999n,
    );
  });
  it('refuses a barcode in a currency other than the real', () => {
    assert.equal(isValidBarcode('00186758600001026560000001149718606852452211'), false);
  });
  it('refuses to format a line with a wrong check digit', () => {
    assert.throws(() => formatLinhaDigitavel('00190000020114971860168524522114675860000102656'), RangeError);
  });
});

describe('boleto properties', () => {
  const boletoInput = fc.record({
    bankCode: fc.stringMatching(/^\d{3}$/),
    days: fc.integer({ min: 0, max: 8999 }),
    amountCents: fc.bigInt({ min: 0n, max: 9_999_999_999n }),
    freeField: fc.stringMatching(/^\d{25}$/),
  });
  const dateOf = (days: number): string =>
    new Date(Date.UTC(2025, 1, 22) + days * 86_400_000).toISOString().slice(0, 10);
  it('barcode and linha round-trip, and brazilian-utils reads the same amount, bank and date', () => {
    fc.assert(
      fc.property(boletoInput, ({ bankCode, days, amountCents, freeField }) => {
        const dueDate = dateOf(days);
        const barcode = boletoBarcode({ bankCode, dueDate, amountCents, freeField });
        const line = linhaDigitavel(barcode);
        assert.equal(barcodeFromLinha(line), barcode);
        assert.equal(barcodeFromLinha(formatLinhaDigitavel(line)), barcode);
        assert.ok(isValidBoleto(line));
        const [y, m, d] = dueDate.split('-').map(Number) as [number, number, number];
        const info = getBoletoInfo(line, { referenceDate: new Date(y, m - 1, d) });
        assert.ok(info !== null);
        assert.equal(info.bankCode, bankCode);
        assert.equal(BigInt(info.amount), amountCents);
        assert.ok(info.expirationDate !== null);
        assert.equal(localDay(info.expirationDate), dueDate);
      }),
    );
  });
  it('any single-digit change in fields 1 to 3 or the DAC is caught', () => {
    fc.assert(
      fc.property(
        boletoInput,
        fc.constantFrom(...Array.from({ length: 33 }, (_, i) => i)),
        ({ bankCode, days, amountCents, freeField }, at) => {
          const line = linhaDigitavel(boletoBarcode({ bankCode, dueDate: dateOf(days), amountCents, freeField }));
          for (const mutated of digitMutations(line, at)) {
            assert.equal(isValidLinhaDigitavel(mutated), false, mutated);
            assert.equal(isValidBoleto(mutated), false, mutated);
          }
        },
      ),
    );
  });
  it('accepts what the brazilian-utils generator produces in reais', () => {
    for (let i = 0; i < 200; i++) {
      const line = generateBoleto();
      if (line[3] !== '9') continue;
      assert.ok(isValidLinhaDigitavel(line), line);
      assert.equal(linhaDigitavel(barcodeFromLinha(line)), line);
    }
  });
});

describe('CPF', () => {
  it('accepts 12345678909, the BCB API Pix example, which validator and brazilian-utils accept too', () => {
    assert.ok(isValidCpf('12345678909'));
    assert.ok(isTaxId('12345678909'));
    assert.ok(oracleIsValidCpf('12345678909'));
    // cpf-cnpj-validator refuses it by a deny list of well-known sample numbers, not by its check digits.
    assert.equal(cpfOracle.isValid('12345678909'), false);
  });
  const valid = ['52998224725', '11144477735', '39053344705'];
  for (const cpf of valid) {
    it(`accepts ${cpf}, as do cpf-cnpj-validator, validator and brazilian-utils`, () => {
      assert.ok(isValidCpf(cpf));
      assert.ok(cpfOracle.isValid(cpf));
      assert.ok(isTaxId(cpf));
      assert.ok(oracleIsValidCpf(cpf));
    });
  }
  it('rejects 12345678900, as do the oracles', () => {
    assert.equal(isValidCpf('12345678900'), false);
    assert.equal(cpfOracle.isValid('12345678900'), false);
    assert.equal(isTaxId('12345678900'), false);
  });
  it('rejects the 11 repeated-digit sequences', () => {
    for (let d = 0; d <= 9; d++) {
      const repeated = String(d).repeat(11);
      assert.equal(isValidCpf(repeated), false, repeated);
      assert.equal(isTaxId(repeated), false, repeated);
    }
  });
  it('accepts the masked form and rejects other punctuation or lengths', () => {
    assert.ok(isValidCpf('529.982.247-25'));
    assert.equal(isValidCpf('529 982 247 25'), false);
    assert.equal(isValidCpf('5299822472'), false);
    assert.equal(isValidCpf('529982247250'), false);
  });
  it('accepts CPFs given check digits by an independent computation; any changed check digit is rejected', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^\d{9}$/).filter((b) => !/^(\d)\1{8}$/.test(b)),
        (base) => {
          const cpf = cpfWithCheckDigits(base);
          assert.ok(isValidCpf(cpf));
          if (cpf !== '12345678909') assert.ok(cpfOracle.isValid(cpf));
          for (const at of [9, 10])
            for (const mutated of digitMutations(cpf, at)) assert.equal(isValidCpf(mutated), false, mutated);
        },
      ),
    );
  });
  it('accepts CPFs from the cpf-cnpj-validator and brazilian-utils generators', () => {
    for (let i = 0; i < 200; i++) {
      assert.ok(isValidCpf(cpfOracle.generate()));
      assert.ok(isValidCpf(generateCpf()));
    }
  });
  it('agrees with cpf-cnpj-validator and validator on arbitrary 11-digit strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.stringMatching(/^\d{11}$/), fc.stringMatching(/^\d{9}$/).map(cpfWithCheckDigits)),
        (value) => {
          if (value !== '12345678909') assert.equal(isValidCpf(value), cpfOracle.isValid(value), value);
          assert.equal(isValidCpf(value), isTaxId(value), value);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('CNPJ', () => {
  const validNumeric = [
    '11222333000181',
    '11444777000161',
    '13723705000189',
    '60391947000100',
    '12345678000195',
    '00000000000191',
    '00360305000104',
    '60701190000104',
    '60746948000112',
    '18236120000158',
    '90400888000142',
  ];
  for (const cnpj of validNumeric) {
    it(`accepts ${cnpj}, as do cpf-cnpj-validator, validator and brazilian-utils`, () => {
      assert.ok(isValidCnpj(cnpj));
      assert.ok(cnpjOracle.isValid(cnpj));
      assert.ok(isTaxId(cnpj));
      assert.ok(oracleIsValidCnpj(cnpj));
    });
  }
  for (const cnpj of ['56989000019533', '11444777000162']) {
    it(`rejects ${cnpj}, as do the oracles`, () => {
      assert.equal(isValidCnpj(cnpj), false);
      assert.equal(cnpjOracle.isValid(cnpj), false);
      assert.equal(isTaxId(cnpj), false);
    });
  }
  for (const cnpj of ['12ABC34501DE35', 'Q0SLFMBD7VX439', '1Z000000000039']) {
    it(`accepts the alphanumeric ${cnpj}, as do the oracles that support IN RFB 2.229`, () => {
      assert.ok(isValidCnpj(cnpj));
      assert.ok(cnpjOracle.isValid(cnpj));
      assert.ok(isTaxId(cnpj));
      assert.ok(oracleIsValidCnpj(cnpj, { version: 2 }));
    });
  }
  it('normalises masks and lowercase before checking', () => {
    assert.equal(normalizeDocument('CNPJ', '12.abc.345/01de-35'), '12ABC34501DE35');
    assert.ok(isValidCnpj('12.abc.345/01de-35'));
    assert.ok(isValidCnpj('11.222.333/0001-81'));
    assert.equal(normalizeDocument('CPF', '529.982.247-25'), '52998224725');
  });
  it('rejects letters in the check digits, wrong lengths and repeated characters', () => {
    assert.equal(isValidCnpj('12ABC34501DE3A'), false);
    assert.equal(isValidCnpj('1122233300018'), false);
    assert.equal(isValidCnpj('00000000000000'), false);
  });
  const alnum = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');
  const cnpjBase = fc
    .oneof(
      fc.stringMatching(/^\d{12}$/),
      fc.array(fc.constantFrom(...alnum), { minLength: 12, maxLength: 12 }).map((c) => c.join('')),
    )
    .filter((b) => !/^(.)\1{11}$/.test(b));
  it('accepts CNPJs given check digits by an independent computation; any changed check digit is rejected', () => {
    fc.assert(
      fc.property(cnpjBase, (base) => {
        const cnpj = cnpjWithCheckDigits(base);
        assert.ok(isValidCnpj(cnpj), cnpj);
        assert.ok(cnpjOracle.isValid(cnpj), cnpj);
        assert.ok(oracleIsValidCnpj(cnpj, { version: 2 }), cnpj);
        for (const at of [12, 13])
          for (const mutated of digitMutations(cnpj, at)) assert.equal(isValidCnpj(mutated), false, mutated);
      }),
    );
  });
  it('accepts CNPJs from the cpf-cnpj-validator and brazilian-utils generators, numeric and alphanumeric', () => {
    for (let i = 0; i < 200; i++) {
      assert.ok(isValidCnpj(cnpjOracle.generate()));
      assert.ok(isValidCnpj(generateCnpj()));
      assert.ok(isValidCnpj(generateCnpj(2)));
    }
  });
  it('agrees with cpf-cnpj-validator, validator and brazilian-utils on arbitrary 14-character values', () => {
    const value = fc.oneof(
      cnpjBase.map(cnpjWithCheckDigits),
      cnpjBase.chain((b) => fc.stringMatching(/^\d{2}$/).map((dv) => b + dv)),
    );
    fc.assert(
      fc.property(value, (v) => {
        const ours = isValidCnpj(v);
        assert.equal(ours, cnpjOracle.isValid(v), v);
        assert.equal(ours, isTaxId(v), v);
        assert.equal(ours, oracleIsValidCnpj(v, { version: 2 }), v);
      }),
      { numRuns: 500 },
    );
  });
});

describe('Pix keys', () => {
  for (const [type, key] of [
    ['CPF', '12345678909'],
    ['CNPJ', '12345678000195'],
    ['CNPJ', '12ABC34501DE35'],
    ['PHONE', '+5510998765432'],
    ['PHONE', '+5511987654321'],
    ['EMAIL', 'pix@bcb.gov.br'],
    ['EMAIL', 'fulano.tal+loja@example.com.br'],
    ['EVP', '123e4567-e89b-12d3-a456-426655440000'],
    ['EVP', '123e4567-e12b-12d1-a456-426655440000'],
  ] as const) {
    it(`accepts ${type} key ${key}`, () => assert.equal(pixKeyProblem(type, key), undefined));
  }
  for (const [type, key, message] of [
    ['CPF', '123.456.789-09', 'accountId must be 11 digits without dots or dashes for accountType CPF'],
    ['CPF', '12345678900', 'accountId must be a CPF whose check digits match for accountType CPF'],
    [
      'CNPJ',
      '12.345.678/0001-95',
      'accountId must be 14 characters without dots, slashes or dashes (12 uppercase letters or digits, then 2 digits) for accountType CNPJ',
    ],
    [
      'CNPJ',
      '12abc34501de35',
      'accountId must be 14 characters without dots, slashes or dashes (12 uppercase letters or digits, then 2 digits) for accountType CNPJ',
    ],
    ['CNPJ', '11444777000162', 'accountId must be a CNPJ whose check digits match for accountType CNPJ'],
    [
      'PHONE',
      '5511987654321',
      'accountId must be a phone number in the form +55DDNNNNNNNNN for accountType PHONE: DDD, then a 9-digit mobile number starting with 9',
    ],
    [
      'PHONE',
      '+551187654321',
      'accountId must be a phone number in the form +55DDNNNNNNNNN for accountType PHONE: DDD, then a 9-digit mobile number starting with 9',
    ],
    [
      'PHONE',
      '+55 11 98765-4321',
      'accountId must be a phone number in the form +55DDNNNNNNNNN for accountType PHONE: DDD, then a 9-digit mobile number starting with 9',
    ],
    [
      'PHONE',
      '+254712345678',
      'accountId must be a phone number in the form +55DDNNNNNNNNN for accountType PHONE: DDD, then a 9-digit mobile number starting with 9',
    ],
    ['EMAIL', 'Pix@bcb.gov.br', 'accountId must be a lowercase e-mail address for accountType EMAIL'],
    ['EMAIL', 'pix.bcb.gov.br', 'accountId must be an e-mail address in the DICT format for accountType EMAIL'],
    ['EMAIL', 'pix@-bcb.gov.br', 'accountId must be an e-mail address in the DICT format for accountType EMAIL'],
    ['EMAIL', `${'a'.repeat(70)}@bcb.gov`, 'accountId must be at most 77 characters for a Pix key'],
    [
      'EVP',
      '123E4567-E89B-12D3-A456-426655440000',
      'accountId must be a lowercase UUID (8-4-4-4-12 hexadecimal digits) for accountType EVP',
    ],
    [
      'EVP',
      '123e4567e89b12d3a456426655440000',
      'accountId must be a lowercase UUID (8-4-4-4-12 hexadecimal digits) for accountType EVP',
    ],
  ] as const) {
    it(`rejects ${type} key ${key}`, () => assert.equal(pixKeyProblem(type, key), message));
  }
  it('accepts a 77-character e-mail key', () =>
    assert.equal(pixKeyProblem('EMAIL', `${'a'.repeat(69)}@bcb.gov`), undefined));
  it('accepts the keys brazilian-utils recognises as the same type', () => {
    assert.ok(isValidPixKey('12345678909', { accept: ['cpf'] }));
    assert.ok(isValidPixKey('+5511987654321', { accept: ['phone'] }));
    assert.ok(isValidPixKey('pix@bcb.gov.br', { accept: ['email'] }));
    assert.ok(isValidPixKey('123e4567-e89b-12d3-a456-426655440000', { accept: ['evp'] }));
  });
  it('accepts any lowercase UUID as an EVP key, as validator does', () => {
    fc.assert(
      fc.property(fc.uuid(), (uuid) => {
        assert.equal(pixKeyProblem('EVP', uuid), undefined);
        assert.ok(validator.isUUID(uuid, 'loose'));
      }),
    );
  });
  it('accepts any valid CPF or CNPJ key and rejects one with a changed check digit', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^\d{9}$/).filter((b) => !/^(\d)\1{8}$/.test(b)),
        (base) => {
          const cpf = cpfWithCheckDigits(base);
          assert.equal(pixKeyProblem('CPF', cpf), undefined);
          for (const mutated of digitMutations(cpf, 10))
            assert.match(pixKeyProblem('CPF', mutated) ?? '', /check digits/);
        },
      ),
    );
  });
});
