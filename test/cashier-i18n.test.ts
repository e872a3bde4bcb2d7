import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cashierTranslator, formatAmount, formatDate, formatDeadline, pickLanguage } from '../src/cashier/i18n.js';
import { parsePayerAmount } from '../src/cashier/checkout.js';

describe('cashier languages and amounts', () => {
  it('picks ?lang, then Accept-Language, then the currency', () => {
    assert.equal(pickLanguage({ query: 'sw', acceptLanguage: 'pt-BR', currency: 'BRL' }), 'sw');
    assert.equal(pickLanguage({ query: 'de', acceptLanguage: 'es-MX,en;q=0.5', currency: 'BRL' }), 'es-MX');
    assert.equal(pickLanguage({ query: 'de', acceptLanguage: 'es-AR,en;q=0.5', currency: 'BRL' }), 'es');
    assert.equal(pickLanguage({ acceptLanguage: 'de-DE', currency: 'MXN' }), 'es-MX');
    assert.equal(cashierTranslator('es-MX')('amountLabel'), 'Monto a pagar');
    assert.equal(cashierTranslator('es-MX')('copy'), cashierTranslator('es')('copy'));
    assert.equal(pickLanguage({ acceptLanguage: 'de-DE, sw;q=0.8, en;q=0.5', currency: 'KES' }), 'sw');
    assert.equal(pickLanguage({ acceptLanguage: 'de-DE', currency: 'BRL' }), 'pt-BR');
    assert.equal(pickLanguage({ acceptLanguage: undefined, currency: 'KES' }), 'en');
    assert.equal(cashierTranslator('pt-BR')('payMerchant', { merchant: 'Loja Azul' }), 'Pagar Loja Azul');
  });

  it('writes amounts the language way, exactly, from decimal text', () => {
    assert.equal(formatAmount('pt-BR', '1234.56', 'BRL'), 'R$ 1.234,56');
    assert.equal(formatAmount('en', '1234.56', 'BRL'), 'R$1,234.56');
    assert.equal(formatAmount('en', '1500', 'KES'), 'KES 1,500');
    assert.equal(formatAmount('es-MX', '1234.50', 'MXN'), '$1,234.50 MXN');
    assert.equal(formatAmount('es', '99999999999.99', 'BRL'), 'R$ 99.999.999.999,99');
    assert.equal(formatAmount('en', '5.25000001', 'BRL'), 'R$5.25000001');
  });

  it('writes reais symbol first in every language: R$ 42,50 in Portuguese and Spanish, R$42.50 in English', () => {
    assert.equal(formatAmount('pt-BR', '42.50', 'BRL'), 'R$ 42,50');
    assert.equal(formatAmount('es', '42.50', 'BRL'), 'R$ 42,50');
    assert.equal(
      formatAmount('es', '1234.56', 'BRL'),
      'R$ 1.234,56',
      'grouped as Brazil writes reais, even with 4 digits',
    );
    assert.equal(formatAmount('en', '42.50', 'BRL'), 'R$42.50');
    assert.equal(formatAmount('sw', '42.50', 'BRL'), 'R$ 42.50');
    assert.equal(formatAmount('es', '1500', 'KES'), 'KES 1.500');
  });

  it('writes a date day first in every language, never the US month first', () => {
    assert.equal(formatDate('en', '2026-11-26'), '26/11/2026');
    assert.equal(formatDate('pt-BR', '2026-11-26'), '26/11/2026');
    assert.equal(formatDate('es', '2026-11-26'), '26/11/2026');
  });

  it('writes a deadline with its date, time and zone, per language', () => {
    // 04:48 UTC: 01:48 in Brasília, 07:48 in Nairobi.
    const at = Date.parse('2026-11-25T04:48:00Z');
    assert.equal(formatDeadline('en', at, 'brazil'), '25 Nov 2026, 01:48 (BRT)');
    assert.equal(formatDeadline('pt-BR', at, 'brazil'), '25 de nov. de 2026, 01:48 (BRT)');
    assert.equal(formatDeadline('es', at, 'brazil'), '25 nov 2026, 01:48 (BRT)');
    assert.equal(formatDeadline('en', at, 'kenya'), '25 Nov 2026, 07:48 (EAT)');
    assert.equal(formatDeadline('sw', at, 'kenya'), '25 Nov 2026, 07:48 (EAT)');
    assert.equal(formatDeadline('en', at, 'usdt'), '25 Nov 2026, 04:48 (UTC)');
  });

  it("reads a payer's amount as typed on a Brazilian phone", () => {
    const cases: [string, bigint | undefined][] = [
      ['42,50', 4250n],
      ['1.234,56', 123456n],
      ['R$ 42,5', 4250n],
      ['42.50', 4250n],
      ['42', 4200n],
      ['1,2,3', undefined],
      ['12.345', undefined],
      ['-5', undefined],
      ['1e3', undefined],
      ['', undefined],
    ];
    for (const [text, expected] of cases) assert.equal(parsePayerAmount(text), expected, text);
  });
});
