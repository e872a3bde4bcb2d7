import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

const KEY = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration of the USDT chains', () => {
  it('is the sandbox unless CHAIN_RAIL=live', () => {
    assert.deepEqual(loadConfig({}).chain, { rail: 'sandbox' });
  });

  it('names each missing endpoint: TRON always, ETH and BSC when the EVM xpub is set', () => {
    assert.deepEqual(problems({ CHAIN_RAIL: 'live' }), [
      'TRON_API_URL: required when CHAIN_RAIL=live (a TronGrid-compatible HTTP API, e.g. https://api.trongrid.io)',
    ]);
    const xpub =
      'xpub6BosfCnifzxcFwrSzQiqu2DBVTshkCXacvNsWGYJVVhhawA7d4R5WSWGFNbi8Aw6ZRc1brxMyWMzG3DSSSSoekkudhUd9yLb6qx39T9nMdj';
    const missing = problems({ CHAIN_RAIL: 'live', TRON_API_URL: 'https://api.trongrid.io', EXCHANGE_EVM_XPUB: xpub });
    assert.ok(
      missing.some((p) => p.startsWith('ETH_RPC_URL: required')),
      missing.join('\n'),
    );
    assert.ok(
      missing.some((p) => p.startsWith('BSC_RPC_URL: required')),
      missing.join('\n'),
    );
  });

  it('reads the chains with their defaults', () => {
    const config = loadConfig({
      CHAIN_RAIL: 'live',
      TRON_API_URL: 'https://api.trongrid.io/',
      TRON_API_KEY: 'k',
      ETH_RPC_URL: 'https://eth.example.com',
    }).chain;
    if (config.rail !== 'live') throw new Error('CHAIN_RAIL=live expected');
    assert.ok(config.eth !== undefined, 'ETH is configured');
    assert.equal(config.tron.apiUrl, 'https://api.trongrid.io');
    assert.equal(config.tron.usdtContract, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    assert.equal(config.tron.confirmations, 19);
    assert.equal(config.eth.usdtContract, '0xdAC17F958D2ee523a2206206994597C13D831ec7');
    assert.equal(config.eth.confirmations, 12);
    assert.equal(config.eth.chainId, 1n);
    assert.equal(config.eth.maxFeePerGas, 200_000_000_000n);
    assert.equal(config.bsc, undefined);
    assert.equal(config.pollIntervalMs, 5_000);
    assert.equal(config.maxPerOrder, 10_000_000_000n);
    assert.equal(config.maxPerDay, 100_000_000_000n);
    assert.deepEqual(config.hotWallets, { tron: undefined, evm: undefined });
  });

  it('reads a hot wallet key from the variable or its file, and never prints it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cashgate-key-'));
    const file = join(dir, 'evm.key');
    writeFileSync(file, `0x${KEY}\n`);
    const config = loadConfig({
      CHAIN_RAIL: 'live',
      TRON_API_URL: 'https://api.trongrid.io',
      TRON_HOT_WALLET_KEY: KEY,
      EVM_HOT_WALLET_KEY_FILE: file,
    }).chain;
    if (config.rail !== 'live') throw new Error('live expected');
    assert.equal(Buffer.from(config.hotWallets.tron?.reveal() ?? []).toString('hex'), KEY);
    assert.equal(Buffer.from(config.hotWallets.evm?.reveal() ?? []).toString('hex'), KEY);
    const decimalBytes = Array.from(Buffer.from(KEY, 'hex').subarray(0, 4)).join(', ');
    const json = JSON.stringify(config, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    assert.deepEqual((JSON.parse(json) as { hotWallets: unknown }).hotWallets, {
      tron: '[hot wallet key]',
      evm: '[hot wallet key]',
    });
    const inspected = inspect(config, { depth: 10, showHidden: true });
    assert.match(inspected, /evm: \[hot wallet key\]/);
    assert.equal(String(config.hotWallets.evm), '[hot wallet key]');
    for (const shown of [json, inspected])
      assert.ok(
        !shown.includes(KEY.slice(0, 16)) && !shown.includes(decimalBytes),
        `the key is not shown, as hex or as bytes: ${shown.slice(0, 200)}`,
      );
    const bad = problems({ CHAIN_RAIL: 'live', TRON_API_URL: 'https://x', EVM_HOT_WALLET_KEY: `${KEY.slice(2)}zz` });
    assert.deepEqual(bad, ['EVM_HOT_WALLET_KEY: must be a private key of 64 hex digits (0x allowed)']);
    assert.ok(!bad[0]?.includes(KEY.slice(2, 20)), 'a bad key is not echoed');
    assert.deepEqual(
      problems({
        CHAIN_RAIL: 'live',
        TRON_API_URL: 'https://x',
        TRON_HOT_WALLET_KEY: KEY,
        TRON_HOT_WALLET_KEY_FILE: file,
      }),
      ['TRON_HOT_WALLET_KEY and TRON_HOT_WALLET_KEY_FILE: set one of them, not both'],
    );
    assert.match(
      problems({ CHAIN_RAIL: 'live', TRON_API_URL: 'https://x', TRON_HOT_WALLET_KEY_FILE: join(dir, 'none') })[0] ?? '',
      /^TRON_HOT_WALLET_KEY_FILE=".*none": must be the path of a readable file holding the key \(ENOENT\)$/,
    );
  });

  it('names each bad value', () => {
    assert.deepEqual(
      problems({
        CHAIN_RAIL: 'live',
        TRON_API_URL: 'https://x',
        TRON_USDT_CONTRACT: 'T123',
        ETH_RPC_URL: 'https://e',
        ETH_USDT_CONTRACT: '0x12',
        ETH_MAX_FEE_GWEI: '0',
        CHAIN_SEND_MAX_PER_DAY_USDT: '1.1234567',
      }),
      [
        'TRON_USDT_CONTRACT="T123": must be a TRON address (Base58Check, T…)',
        'ETH_USDT_CONTRACT="0x12": must be a contract address (0x and 40 hex digits)',
        'ETH_MAX_FEE_GWEI="0": must be a positive number of gwei with at most 9 decimals',
        'CHAIN_SEND_MAX_PER_DAY_USDT="1.1234567": must be a positive USDT amount with at most 6 decimals',
      ],
    );
  });
});
