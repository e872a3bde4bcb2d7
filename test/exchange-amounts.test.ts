import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatUnits as ethersFormatUnits, parseUnits as ethersParseUnits } from 'ethers';
import fc from 'fast-check';
import {
  applySpread,
  fiatForTokens,
  formatRate,
  formatUnits,
  parseRate,
  parseUnits,
  RATE_DECIMALS,
  TOKEN_DECIMALS,
  tokensForFiat,
} from '../src/exchange/amounts.js';

/**
 * The model these tests hold src/exchange/amounts.ts to: ethers' unit conversion and plain BigInt
 * arithmetic written here. Every expectation is an integer; no float appears anywhere.
 */
const RUNS = { numRuns: 300 };
const pow10 = (n: number) => 10n ** BigInt(n);
const SCALE = pow10(8);

/** ethers' formatUnits writes "1.0" for a whole amount; the exchange writes "1". */
const ethersShortest = (units: bigint, decimals: number) => ethersFormatUnits(units, decimals).replace(/\.0$/, '');

/** Fiat in minor units, 0 to 10^15. */
const fiatMinor = fc.bigInt({ min: 0n, max: pow10(15) });
/**
 * Rates as integers scaled by 10^8: small ones (1 to 10^12, i.e. 0.00000001 to 10 000 fiat per
 * token) and large ones (1 to 10^12 whole fiat per token).
 */
const rate = fc.oneof(fc.bigInt({ min: 1n, max: pow10(12) }), fc.bigInt({ min: SCALE, max: pow10(12) * SCALE }));
const tokenDecimals = fc.constantFrom(6, 18);
const fiatDecimals = fc.constantFrom(2, 0);
const anyDecimals = fc.constantFrom(0, 2, 6, 8, 18);

describe('exchange amounts: token decimals and rate scale', () => {
  it('USDT has 6 decimals on TRON and ETH, 18 on BSC', () => {
    assert.deepEqual({ ...TOKEN_DECIMALS }, { TRON: 6, ETH: 6, BSC: 18 });
  });
  it('rates carry 8 decimals', () => assert.equal(RATE_DECIMALS, 8));
});

describe('exchange amounts: parseUnits', () => {
  it('reads plain decimal text as an integer scaled by 10^decimals', () => {
    assert.equal(parseUnits('0', 6), 0n);
    assert.equal(parseUnits('1', 6), 1_000_000n);
    assert.equal(parseUnits('18.224995', 6), 18_224_995n);
    assert.equal(parseUnits('0.000001', 6), 1n);
    assert.equal(parseUnits('007.50', 6), 7_500_000n, 'leading zeros and a trailing zero are plain decimal text');
    assert.equal(parseUnits('1.123456789012345678', 18), 1_123_456_789_012_345_678n);
    assert.equal(parseUnits('5.4321', 8), 543_210_000n);
    assert.equal(parseUnits('42', 0), 42n);
  });

  for (const [text, decimals, why] of [
    ['1.1234567', 6, 'seven decimals where six are allowed'],
    ['0.0000001', 6, 'a unit below the smallest one'],
    ['1.5', 0, 'a fraction where none is allowed'],
    ['1.1234567890123456789', 18, 'nineteen decimals on 18'],
    ['-1', 6, 'a minus sign'],
    ['+1', 6, 'a plus sign'],
    ['-0', 6, 'a signed zero'],
    ['1e3', 6, 'an exponent'],
    ['1E3', 6, 'an upper-case exponent'],
    ['1.5e-3', 6, 'a fraction with an exponent'],
    ['', 6, 'empty text'],
    [' 1', 6, 'a leading space'],
    ['1 ', 6, 'a trailing space'],
    ['1.', 6, 'a point without decimals'],
    ['.5', 6, 'a point without a whole part'],
    ['1,5', 6, 'a decimal comma'],
    ['1_000', 6, 'a digit separator'],
    ['0x10', 6, 'hexadecimal'],
    ['abc', 6, 'letters'],
    ['Infinity', 6, 'Infinity'],
    ['NaN', 6, 'NaN'],
    ['١', 6, 'a non-ASCII digit'],
    ['1.2.3', 6, 'two points'],
  ] as const) {
    it(`refuses ${JSON.stringify(text)} at ${decimals} decimals (${why})`, () =>
      assert.equal(parseUnits(text, decimals), undefined));
  }

  it('agrees with ethers on every plain decimal text that fits the decimals', () => {
    fc.assert(
      fc.property(
        anyDecimals.chain((decimals) =>
          fc.tuple(
            fc.constant(decimals),
            fc.stringMatching(/^\d{1,25}$/),
            fc.stringMatching(new RegExp(`^\\d{0,${decimals}}$`)),
          ),
        ),
        ([decimals, whole, fraction]) => {
          const text = fraction === '' ? whole : `${whole}.${fraction}`;
          assert.equal(parseUnits(text, decimals), ethersParseUnits(text, decimals), text);
        },
      ),
      RUNS,
    );
  });

  it('refuses every text with more decimals than allowed (ethers refuses them too)', () => {
    fc.assert(
      fc.property(
        anyDecimals.chain((decimals) =>
          fc.tuple(
            fc.constant(decimals),
            fc.stringMatching(/^\d{1,10}$/),
            fc.stringMatching(new RegExp(`^\\d{${decimals}}[1-9]\\d{0,3}$`)),
          ),
        ),
        ([decimals, whole, fraction]) => {
          const text = `${whole}.${fraction}`;
          assert.equal(parseUnits(text, decimals), undefined, text);
          assert.throws(() => ethersParseUnits(text, decimals), text);
        },
      ),
      RUNS,
    );
  });

  it('on any text at all, returns a value only for unsigned plain decimals, and then the one ethers reads', () => {
    const plain = (decimals: number) => new RegExp(`^\\d+(?:\\.\\d{1,${decimals}})?$`);
    fc.assert(
      fc.property(
        anyDecimals,
        fc.oneof(fc.string({ maxLength: 12 }), fc.stringMatching(/^[-+]?\d{0,4}(?:[.,]\d{0,8})?(?:[eE][-+]?\d)?$/)),
        (decimals, text) => {
          const parsed = parseUnits(text, decimals);
          // A point with no decimals is not plain decimal text, whatever the decimals allow.
          const acceptable = decimals === 0 ? /^\d+$/.test(text) : plain(decimals).test(text);
          if (!acceptable) {
            assert.equal(parsed, undefined, JSON.stringify(text));
            return;
          }
          assert.equal(parsed, ethersParseUnits(text, decimals), text);
        },
      ),
      RUNS,
    );
  });
});

describe('exchange amounts: formatUnits', () => {
  it('writes the shortest plain decimal text', () => {
    assert.equal(formatUnits(0n, 6), '0');
    assert.equal(formatUnits(1n, 6), '0.000001');
    assert.equal(formatUnits(1_000_000n, 6), '1');
    assert.equal(formatUnits(18_500_000n, 6), '18.5');
    assert.equal(formatUnits(100_000_000n, 6), '100');
    assert.equal(formatUnits(1n, 18), '0.000000000000000001');
    assert.equal(formatUnits(42n, 0), '42');
  });

  it('agrees with ethers (less its trailing ".0") on any amount and decimals', () => {
    fc.assert(
      fc.property(anyDecimals, fc.bigInt({ min: 0n, max: pow10(40) }), (decimals, units) => {
        assert.equal(formatUnits(units, decimals), ethersShortest(units, decimals), `${units} at ${decimals}`);
      }),
      RUNS,
    );
  });

  it('parseUnits ∘ formatUnits is the identity, and the text has no redundant zero', () => {
    fc.assert(
      fc.property(anyDecimals, fc.bigInt({ min: 0n, max: pow10(40) }), (decimals, units) => {
        const text = formatUnits(units, decimals);
        assert.equal(parseUnits(text, decimals), units, text);
        assert.match(text, /^(?:0|[1-9]\d*)(?:\.\d*[1-9])?$/, text);
      }),
      RUNS,
    );
  });

  it('formatUnits ∘ parseUnits gives back the canonical text of what was read', () => {
    fc.assert(
      fc.property(
        tokenDecimals,
        fc.stringMatching(/^\d{1,15}$/),
        fc.stringMatching(/^\d{0,6}$/),
        (decimals, whole, fraction) => {
          const text = fraction === '' ? whole : `${whole}.${fraction}`;
          const units = parseUnits(text, decimals);
          assert.notEqual(units, undefined);
          const canonical = ethersShortest(ethersParseUnits(text, decimals), decimals);
          assert.equal(formatUnits(units ?? -1n, decimals), canonical, text);
        },
      ),
      RUNS,
    );
  });
});

describe('exchange amounts: rates', () => {
  it('parseRate reads up to 8 decimals and refuses zero, a ninth decimal and anything not plain', () => {
    assert.equal(parseRate('5.4321'), 543_210_000n);
    assert.equal(parseRate('0.00000001'), 1n);
    assert.equal(parseRate('18'), 1_800_000_000n);
    for (const bad of ['0', '0.00000000', '5.123456789', '-5', '5e1', '', 'abc', '.5'])
      assert.equal(parseRate(bad), undefined, bad);
  });

  it('formatRate writes the shortest text, and parseRate ∘ formatRate is the identity', () => {
    assert.equal(formatRate(543_210_000n), '5.4321');
    assert.equal(formatRate(1_838_200_000n), '18.382');
    fc.assert(
      fc.property(rate, (r) => {
        const text = formatRate(r);
        assert.equal(text, ethersShortest(r, 8));
        assert.equal(parseRate(text), r, text);
      }),
      RUNS,
    );
  });
});

describe('exchange amounts: applySpread', () => {
  it('worked values: 18.20 + 1 % = 18.382, 18 − 1 % = 17.82, and sub-unit results round outward from the spread', () => {
    assert.equal(applySpread(1_820_000_000n, 100, 'sell'), 1_838_200_000n);
    assert.equal(applySpread(1_800_000_000n, 100, 'buy'), 1_782_000_000n);
    // 1 unit × 1.0001 = 1.0001 units: up to 2 when selling, down to 0 when buying.
    assert.equal(applySpread(1n, 1, 'sell'), 2n);
    assert.equal(applySpread(1n, 1, 'buy'), 0n);
    assert.equal(applySpread(3n, 5_000, 'sell'), 5n, '3 × 1.5 = 4.5 rounds up to 5');
    assert.equal(applySpread(3n, 5_000, 'buy'), 1n, '3 × 0.5 = 1.5 rounds down to 1');
  });

  it('a spread of 0 changes neither side', () => {
    fc.assert(
      fc.property(rate, (r) => {
        assert.equal(applySpread(r, 0, 'sell'), r);
        assert.equal(applySpread(r, 0, 'buy'), r);
      }),
      RUNS,
    );
  });

  it('sell is rate·(1 + bps) rounded up, buy is rate·(1 − bps) rounded down, so sell ≥ rate ≥ buy', () => {
    fc.assert(
      fc.property(rate, fc.integer({ min: 0, max: 10_000 }), (r, bps) => {
        const b = BigInt(bps);
        const sell = applySpread(r, bps, 'sell');
        const buy = applySpread(r, bps, 'buy');
        // Ceiling: the smallest s with s·10000 ≥ r·(10000 + bps).
        assert.ok(sell * 10_000n >= r * (10_000n + b), `sell ${sell} of ${r} at ${bps} is at least the exact value`);
        assert.ok(
          (sell - 1n) * 10_000n < r * (10_000n + b),
          `sell ${sell} of ${r} at ${bps} is rounded up by less than one unit`,
        );
        // Floor: the largest s with s·10000 ≤ r·(10000 − bps).
        assert.ok(buy * 10_000n <= r * (10_000n - b), `buy ${buy} of ${r} at ${bps} is at most the exact value`);
        assert.ok(
          (buy + 1n) * 10_000n > r * (10_000n - b),
          `buy ${buy} of ${r} at ${bps} is rounded down by less than one unit`,
        );
        assert.ok(sell >= r && r >= buy);
      }),
      RUNS,
    );
  });
});

describe('exchange amounts: tokensForFiat and fiatForTokens', () => {
  it('worked value: 99.00 BRL at 5.4321 buys 18.224995 USDT on TRON', () => {
    assert.equal(tokensForFiat(9_900n, 2, 543_210_000n, 6), 18_224_995n);
    assert.equal(fiatForTokens(100_000_000n, 6, 540_000_000n, 2), 54_000n, '100 USDT at 5.40 are worth 540.00');
    assert.equal(tokensForFiat(0n, 2, 543_210_000n, 18), 0n);
    assert.equal(tokensForFiat(1n, 2, pow10(12) * SCALE, 6), 0n, 'a cent buys nothing at a trillion per token');
  });

  it('tokensForFiat is floor(fiat·10^td·10^8 ÷ (rate·10^fd)): the most tokens whose value does not exceed the fiat', () => {
    fc.assert(
      fc.property(fiatMinor, fiatDecimals, rate, tokenDecimals, (fiat, fd, r, td) => {
        const t = tokensForFiat(fiat, fd, r, td);
        const paid = fiat * pow10(td) * SCALE;
        assert.equal(t, paid / (r * pow10(fd)));
        // t·rate ≤ fiat·10^(td+8−fd) < (t+1)·rate, multiplied through by 10^fd to stay in integers.
        assert.ok(t * r * pow10(fd) <= paid, `${t} tokens cost no more than ${fiat}`);
        assert.ok((t + 1n) * r * pow10(fd) > paid, `${t + 1n} tokens would cost more than ${fiat}`);
        assert.ok(fiatForTokens(t, td, r, fd) <= fiat, 'what was bought is worth no more than what was paid');
      }),
      RUNS,
    );
  });

  it('fiatForTokens is floor(tokens·rate·10^fd ÷ (10^td·10^8)): the most fiat the tokens are worth', () => {
    fc.assert(
      fc.property(
        tokenDecimals.chain((td) => fc.tuple(fc.constant(td), fc.bigInt({ min: 0n, max: pow10(15 + td) }))),
        fiatDecimals,
        rate,
        ([td, tokens], fd, r) => {
          const f = fiatForTokens(tokens, td, r, fd);
          const worth = tokens * r * pow10(fd);
          const unit = pow10(td) * SCALE;
          assert.equal(f, worth / unit);
          assert.ok(f * unit <= worth, `${f} is no more than ${tokens} tokens are worth`);
          assert.ok((f + 1n) * unit > worth, `${f + 1n} would be more than ${tokens} tokens are worth`);
          assert.ok(tokensForFiat(f, fd, r, td) <= tokens, 'the fiat paid out buys back no more tokens than came in');
        },
      ),
      RUNS,
    );
  });

  it('a whole-unit rate and whole tokens convert exactly, both ways', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: pow10(6) }),
        fc.bigInt({ min: 0n, max: pow10(9) }),
        tokenDecimals,
        (wholeRate, wholeTokens, td) => {
          const r = wholeRate * SCALE;
          const tokens = wholeTokens * pow10(td);
          const fiat = fiatForTokens(tokens, td, r, 2);
          assert.equal(fiat, wholeTokens * wholeRate * 100n);
          assert.equal(tokensForFiat(fiat, 2, r, td), tokens);
        },
      ),
      RUNS,
    );
  });
});
