import assert from 'node:assert/strict';
import { HDNodeWallet } from 'ethers';
import { SANDBOX_XPUBS } from '../src/rails/chain/derivation.js';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({}, '/srv/cashgate');
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8080);
    assert.equal(config.dataDir, '/srv/cashgate/data');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.adminToken, undefined);
    assert.equal(config.keyActivationDelayMs, 90_000);
    assert.equal(config.signatureWindowMs, 300_000);
    assert.equal(config.callbackRetryIntervalMs, 180_000);
    assert.equal(config.callbackMaxRetries, 2);
    assert.equal(config.callbackRetryWindowMs, 1_800_000);
    assert.equal(config.callbackAllowPrivateNetworks, false);
    assert.equal(config.trustProxy, false);
    assert.equal(config.publicBaseUrl, 'http://127.0.0.1:8080');
  });

  it('reads every variable', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: '9000',
      CASHGATE_DATA_DIR: '/var/lib/cashgate',
      DATABASE_URL: 'postgres://u@db:5432/cashgate',
      CASHGATE_ADMIN_TOKEN: 'a-long-enough-admin-token',
      CASHGATE_MASTER_KEY: 'ab'.repeat(32),
      KEY_ACTIVATION_DELAY_MS: '0',
      SIGNATURE_WINDOW_MS: '60000',
      CALLBACK_RETRY_INTERVAL_MS: '1000',
      CALLBACK_MAX_RETRIES: '5',
      CALLBACK_RETRY_WINDOW_MS: '10000',
      CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
      TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
      PUBLIC_BASE_URL: 'https://pay.example.com/',
    });
    assert.equal(config.port, 9000);
    assert.equal(config.databaseUrl, 'postgres://u@db:5432/cashgate');
    assert.equal(config.masterKey?.length, 32);
    assert.equal(config.keyActivationDelayMs, 0);
    assert.equal(config.callbackAllowPrivateNetworks, true);
    assert.deepEqual(config.trustProxy, ['10.0.0.0/8', '127.0.0.1']);
    assert.equal(config.publicBaseUrl, 'https://pay.example.com');
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.throws(() => loadConfig({ TRUST_PROXY: '10.0.0.0/8,1.2.3.999' }), /TRUST_PROXY/);
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
    assert.equal(loadConfig({ CASHGATE_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') }).masterKey?.[0], 7);
  });

  it('lists every bad variable in one error', () => {
    try {
      loadConfig({
        PORT: '80a',
        DATABASE_URL: 'mysql://x',
        KEY_ACTIVATION_DELAY_MS: '-5',
        SIGNATURE_WINDOW_MS: '1.5',
        CALLBACK_MAX_RETRIES: 'two',
        CALLBACK_ALLOW_PRIVATE_NETWORKS: 'maybe',
        TRUST_PROXY: 'some proxies',
        PUBLIC_BASE_URL: 'pay.example.com',
        CASHGATE_MASTER_KEY: 'short',
        CASHGATE_ADMIN_TOKEN: 'short',
        LOG_LEVEL: 'loud',
        CALLBACK_TIMEOUT_MS: '10',
        CASHGATE_SANDBOX: 'perhaps',
        PIX_KEY: 'not a key',
        PIX_MERCHANT_NAME: 'A NAME FAR TOO LONG FOR A BR CODE',
        BOLETO_BANK_CODE: '34',
        PIX_JWS_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----',
      });
      assert.fail('expected a ConfigError');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      const names = error.problems.map((p) => /^[A-Z_]+/.exec(p)?.[0]);
      assert.deepEqual(names.sort(), [
        'BOLETO_BANK_CODE',
        'CALLBACK_ALLOW_PRIVATE_NETWORKS',
        'CALLBACK_MAX_RETRIES',
        'CALLBACK_TIMEOUT_MS',
        'CASHGATE_ADMIN_TOKEN',
        'CASHGATE_MASTER_KEY',
        'CASHGATE_SANDBOX',
        'DATABASE_URL',
        'KEY_ACTIVATION_DELAY_MS',
        'LOG_LEVEL',
        'PIX_JWS_PRIVATE_KEY',
        'PIX_KEY',
        'PIX_MERCHANT_NAME',
        'PORT',
        'PUBLIC_BASE_URL',
        'SIGNATURE_WINDOW_MS',
        'TRUST_PROXY',
      ]);
      for (const problem of error.problems) assert.match(problem, /must/);
    }
  });

  it('derives deposit addresses from the published sandbox xpubs only while the sandbox is on', () => {
    const sandbox = loadConfig({});
    assert.deepEqual(sandbox.exchange.xpubs, SANDBOX_XPUBS);
    assert.deepEqual(sandbox.exchange.sandboxXpubs, ['tron', 'evm']);
    assert.equal(sandbox.exchange.quoteTtlMs, 1_800_000);
    const own = loadConfig({ EXCHANGE_TRON_XPUB: SANDBOX_XPUBS.evm });
    assert.deepEqual(own.exchange.sandboxXpubs, ['evm'], 'an xpub the operator set is not called a sandbox key');

    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.problems;
      }
    };
    assert.deepEqual(
      problems({ CASHGATE_SANDBOX: 'false' }).map((p) => p.split(':')[0]),
      ['EXCHANGE_TRON_XPUB'],
      "real deposits need the operator's own TRON xpub (no EVM deposit address is handed out yet)",
    );
    const xprv = HDNodeWallet.fromPhrase(
      'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about',
      undefined,
      "m/44'/195'/0'",
    ).extendedKey;
    assert.match(problems({ EXCHANGE_TRON_XPUB: xprv })[0] ?? '', /EXCHANGE_TRON_XPUB: must be an extended PUBLIC key/);
    assert.match(problems({ EXCHANGE_EVM_XPUB: 'xpub-nonsense' })[0] ?? '', /EXCHANGE_EVM_XPUB: not an extended key/);
    assert.match(problems({ EXCHANGE_QUOTE_TTL_MS: '5' })[0] ?? '', /EXCHANGE_QUOTE_TTL_MS/);
  });
});
