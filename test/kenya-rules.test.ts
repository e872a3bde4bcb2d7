import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import libphonenumber from 'google-libphonenumber';
import validator from 'validator';
import { isKenyanMobile, maskKenyanMobile } from '../src/kenya/phone.js';

const phoneUtil = libphonenumber.PhoneNumberUtil.getInstance();

/** libphonenumber's verdict: a valid Kenyan number whose type is mobile. */
function libphonenumberSaysKenyanMobile(msisdn: string): boolean {
  try {
    const number = phoneUtil.parse(`+${msisdn}`);
    return (
      phoneUtil.isValidNumberForRegion(number, 'KE') &&
      phoneUtil.getNumberType(number) === libphonenumber.PhoneNumberType.MOBILE
    );
  } catch {
    return false;
  }
}

describe('Kenyan mobile numbers', () => {
  for (const msisdn of [
    '254712123456',
    '254712345678',
    '254799999999',
    '254110123456',
    '254100123456',
    '254130123456',
    '254701234567',
  ]) {
    it(`accepts ${msisdn}, which libphonenumber reads as a Kenyan mobile`, () => {
      assert.ok(isKenyanMobile(msisdn));
      assert.ok(libphonenumberSaysKenyanMobile(msisdn));
    });
  }
  for (const [msisdn, why] of [
    ['+254712345678', 'the + sign'],
    ['0712345678', 'the local 0 form'],
    ['712345678', 'the bare national number'],
    ['25471234567', 'eleven digits'],
    ['2547123456789', 'thirteen digits'],
    ['254202345678', 'a Nairobi landline'],
    ['254812345678', 'an 8 range'],
    ['255712345678', 'the Tanzanian code'],
    ['254 712 345 678', 'spaces'],
    ['', 'nothing'],
  ] as const) {
    it(`rejects ${msisdn || '""'} (${why})`, () => assert.equal(isKenyanMobile(msisdn), false));
  }
  it('rejects the landline that libphonenumber also reads as fixed line', () => {
    assert.equal(libphonenumberSaysKenyanMobile('254202345678'), false);
  });
  it('accepts every number libphonenumber reads as a Kenyan mobile', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]\d{8}$/), (nsn) => {
        const msisdn = `254${nsn}`;
        if (libphonenumberSaysKenyanMobile(msisdn)) assert.ok(isKenyanMobile(msisdn), msisdn);
      }),
      { numRuns: 2000 },
    );
  });
  it('agrees with libphonenumber on the whole 07 range', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^7\d{8}$/), (nsn) => {
        assert.equal(isKenyanMobile(`254${nsn}`), libphonenumberSaysKenyanMobile(`254${nsn}`), nsn);
      }),
    );
  });
  it('agrees with validator en-KE on every 254-prefixed twelve-digit value', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^254\d{9}$/), (msisdn) => {
        assert.equal(isKenyanMobile(msisdn), validator.isMobilePhone(msisdn, 'en-KE'), msisdn);
      }),
      { numRuns: 1000 },
    );
  });
  it('takes only the API form where validator also takes +254 and 0 forms', () => {
    for (const other of ['+254712345678', '0712345678']) {
      assert.ok(validator.isMobilePhone(other, 'en-KE'));
      assert.equal(isKenyanMobile(other), false);
    }
  });
});

describe('masked Kenyan mobile numbers', () => {
  it('shows the first four and last three digits', () =>
    assert.equal(maskKenyanMobile('254712345123'), '2547•••••123'));
  it('masks 01 range numbers the same way', () => assert.equal(maskKenyanMobile('254110987654'), '2541•••••654'));
  it('refuses to mask anything but a Kenyan mobile number', () => {
    assert.throws(() => maskKenyanMobile('0712345123'), { name: 'RangeError', message: /Kenyan mobile number/ });
  });
  it('never reveals the middle five digits', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^254[17]\d{8}$/), (msisdn) => {
        const masked = maskKenyanMobile(msisdn);
        assert.equal(masked, `${msisdn.slice(0, 4)}•••••${msisdn.slice(9)}`);
        assert.equal(masked.length, 12);
      }),
    );
  });
});
