import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forbiddenAddressReason } from '../src/callbacks/address-guard.js';
import { callbackHeaders } from '../src/callbacks/delivery.js';
import { nextRetryAt } from '../src/callbacks/retry-policy.js';
import { verifyCallback } from '@cashgate/sdk';

describe('callback target addresses', () => {
  for (const [address, reason] of [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'this-network'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd12:3456::1', 'unique local'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['::7f00:1', 'loopback'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2001:db8::1', 'documentation'],
    ['::ffff:0:7f00:1', 'loopback'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
  ] as const) {
    it(`refuses ${address} (${reason})`, () => assert.equal(forbiddenAddressReason(address), reason));
  }
  for (const address of [
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '192.0.2.200',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '2002:808:808::1',
  ]) {
    it(`allows ${address}`, () => assert.equal(forbiddenAddressReason(address), undefined));
  }
});

describe('callback retry schedule', () => {
  const policy = { intervalMs: 180_000, maxRetries: 2, windowMs: 1_800_000 };
  it('retries twice, each an interval after the previous attempt, then gives up', () => {
    assert.equal(nextRetryAt(policy, { attemptsMade: 1, firstAttemptAt: 0, lastAttemptAt: 0 }), 180_000);
    assert.equal(nextRetryAt(policy, { attemptsMade: 2, firstAttemptAt: 0, lastAttemptAt: 180_500 }), 360_500);
    assert.equal(nextRetryAt(policy, { attemptsMade: 3, firstAttemptAt: 0, lastAttemptAt: 360_500 }), undefined);
  });
  it('never schedules a retry later than the window after the first attempt', () => {
    const wide = { ...policy, maxRetries: 100 };
    assert.equal(nextRetryAt(wide, { attemptsMade: 10, firstAttemptAt: 0, lastAttemptAt: 1_620_000 }), 1_800_000);
    assert.equal(nextRetryAt(wide, { attemptsMade: 11, firstAttemptAt: 0, lastAttemptAt: 1_620_001 }), undefined);
  });
  it('does not retry when no retries are allowed', () => {
    assert.equal(
      nextRetryAt({ ...policy, maxRetries: 0 }, { attemptsMade: 1, firstAttemptAt: 0, lastAttemptAt: 0 }),
      undefined,
    );
  });
});

describe('callback headers', () => {
  it('sign the body with the key of the order and carry notify_id', () => {
    const call = {
      url: 'https://m.example',
      payload: '{"orderId":"o1","amount":"10.50","n":3,"empty":"","none":null}',
      notifyId: 'ntf_1',
      accessKey: 'AK1',
      secretKey: 's3cret',
    };
    const headers = callbackHeaders(call, 1795420700977, '3ef39f47-afa0-43d9-9874-73f2d3ce5076');
    assert.equal(headers.notify_id, 'ntf_1');
    assert.equal(headers.timestamp, '1795420700977');
    const signed = {
      access_key: 'AK1',
      timestamp: '1795420700977',
      nonce: '3ef39f47-afa0-43d9-9874-73f2d3ce5076',
      sign: headers.sign ?? '',
    };
    assert.ok(verifyCallback('s3cret', JSON.parse(call.payload), signed));
    assert.ok(!verifyCallback('other', JSON.parse(call.payload), signed));
  });
});
