import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { computeSign, signsEqual, stringToSign, verifyCallback } from '@cashgate/sdk';
import { signingVectors } from './support/signing-vectors.js';

const fixture = signingVectors;

describe('request signing (worked vectors computed independently)', () => {
  for (const vector of fixture.vectors) {
    it(vector.name, () => {
      const headers = { access_key: fixture.access_key, timestamp: vector.timestamp, nonce: vector.nonce };
      assert.equal(stringToSign(vector.params, headers), vector.stringToSign);
      assert.equal(computeSign(fixture.secret_key, vector.params, headers), vector.sign);
    });
  }
});

describe('string to sign rules', () => {
  const headers = { access_key: 'AK1', timestamp: '1763800000000', nonce: '3f2a8c4e-1b6d-4e9f-8a7b-2c5d9e0f1a3b' };

  it('never includes a sign member', () => {
    assert.equal(
      stringToSign({ sign: 'x', b: '2' }, headers),
      'access_key=AK1&b=2&nonce=3f2a8c4e-1b6d-4e9f-8a7b-2c5d9e0f1a3b&timestamp=1763800000000',
    );
  });

  it('lets the headers win over body members of the same name', () => {
    assert.equal(
      stringToSign({ timestamp: '1', nonce: 'n', access_key: 'evil' }, headers),
      'access_key=AK1&nonce=3f2a8c4e-1b6d-4e9f-8a7b-2c5d9e0f1a3b&timestamp=1763800000000',
    );
  });

  it('keeps false and zero, which are not empty', () => {
    assert.equal(
      stringToSign({ a: false, b: 0, c: [], d: {} }, headers),
      'a=false&access_key=AK1&b=0&c=[]&d={}&nonce=3f2a8c4e-1b6d-4e9f-8a7b-2c5d9e0f1a3b&timestamp=1763800000000',
    );
  });

  it('sorts by UTF-8 bytes, not by locale', () => {
    assert.equal(
      stringToSign({ é: '1', z: '2', Z: '3' }, headers)
        .split('&')
        .map((p) => p.split('=')[0])
        .join(','),
      'Z,access_key,nonce,timestamp,z,é',
    );
  });

  it('is HMAC-SHA1 in standard Base64 with padding', () => {
    const text = stringToSign({ amount: '1.00' }, headers);
    assert.equal(
      computeSign('secret', { amount: '1.00' }, headers),
      createHmac('sha1', 'secret').update(text).digest('base64'),
    );
    assert.match(computeSign('secret', null, headers), /^[A-Za-z0-9+/]{27}=$/);
  });

  it('compares signs in constant time and refuses any difference', () => {
    const sign = computeSign('secret', null, headers);
    assert.equal(signsEqual(sign, sign), true);
    assert.equal(signsEqual(sign, `${sign.slice(0, -2)}A=`), false);
    assert.equal(signsEqual(sign, sign.slice(1)), false);
  });

  it('verifies a callback body with the headers it came with', () => {
    const body = { orderId: 'BR1', orderStatusCode: 2, orderActualAmount: '10.00', errorMsg: null };
    const sign = computeSign('secret', body, headers);
    assert.equal(verifyCallback('secret', body, { ...headers, sign }), true);
    assert.equal(verifyCallback('secret', { ...body, orderActualAmount: '10.01' }, { ...headers, sign }), false);
    assert.equal(verifyCallback('other', body, { ...headers, sign }), false);
  });
});
