import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { HDNodeWallet, Mnemonic, getAddress as ethersGetAddress } from 'ethers';
import { getAddress as viemGetAddress, isAddress as viemIsAddress } from 'viem';
import bs58check from 'bs58check';
import {
  CHAINS,
  evmChecksumAddress,
  isChainAddress,
  isEvmAddress,
  isTradeHash,
  isTronAddress,
  randomTradeHash,
  tronAddress,
} from '../src/rails/chain/addresses.js';
import {
  ACCOUNT_PATHS,
  DepositAddressDeriver,
  MAX_ADDRESS_INDEX,
  SANDBOX_XPUBS,
  parseAccountXpub,
} from '../src/rails/chain/derivation.js';

const EIP55_VECTORS = [
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
];
const USDT_TRC20 = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const USDT_TRC20_HEX = '41a614f803b6fd780986a42c78ec9c7f77e6ded13c';
const TRON_ZERO = 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb';
const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

const body20 = fc.uint8Array({ minLength: 20, maxLength: 20 });
const fromHex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, 'hex'));
const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** Oracle: TRON validity per bs58check (checksum) plus the 21-byte 0x41 payload rule. */
function oracleIsTron(text: string): boolean {
  if (text.length !== 34) return false;
  const payload = bs58check.decodeUnsafe(text);
  return payload !== undefined && payload.length === 21 && payload[0] === 0x41;
}

/** Oracle: TRON text from an EVM address, via bs58check. */
function oracleTronFromEvm(evm: string): string {
  return bs58check.encode(fromHex(`41${evm.slice(2)}`));
}

function flipCase(text: string, position: number): string {
  const char = text.charAt(position);
  const flipped = char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase();
  return text.slice(0, position) + flipped + text.slice(position + 1);
}

const mnemonicRoot = HDNodeWallet.fromSeed(Mnemonic.fromPhrase(MNEMONIC).computeSeed());

test('EIP-55 vectors pass, and fail with any one letter case flipped', () => {
  for (const vector of EIP55_VECTORS) {
    assert.equal(isEvmAddress(vector), true, vector);
    assert.equal(isChainAddress('ETH', vector), true);
    assert.equal(isChainAddress('BSC', vector), true);
    assert.equal(isChainAddress('TRON', vector), false);
    assert.equal(evmChecksumAddress(fromHex(vector.slice(2))), vector);
    let letters = 0;
    for (let i = 2; i < vector.length; i++) {
      if (!/[a-fA-F]/.test(vector.charAt(i))) continue;
      letters++;
      const bad = flipCase(vector, i);
      assert.equal(isEvmAddress(bad), false, bad);
      assert.equal(viemIsAddress(bad, { strict: true }), false, `viem agrees on ${bad}`);
      assert.throws(() => ethersGetAddress(bad), `ethers agrees on ${bad}`);
    }
    assert.ok(letters > 0);
  }
});

test('EVM: all-lower and all-upper pass; wrong length, non-hex, missing 0x fail', () => {
  for (const vector of EIP55_VECTORS) {
    const digits = vector.slice(2);
    assert.equal(isEvmAddress(`0x${digits.toLowerCase()}`), true);
    assert.equal(isEvmAddress(`0x${digits.toUpperCase()}`), true);
    assert.equal(isEvmAddress(digits), false, 'no 0x');
    assert.equal(isEvmAddress(`0X${digits}`), false, '0X');
    assert.equal(isEvmAddress(vector.slice(0, -1)), false, '39 hex');
    assert.equal(isEvmAddress(`${vector}a`), false, '41 hex');
    assert.equal(isEvmAddress(`0x${digits.toLowerCase().slice(0, -1)}g`), false, 'non-hex');
    assert.equal(isEvmAddress(` ${vector}`), false, 'leading space');
    assert.equal(isEvmAddress(`${vector}\n`), false, 'trailing newline');
  }
  assert.equal(isEvmAddress(''), false);
  assert.equal(isEvmAddress('0x'), false);
  assert.equal(isEvmAddress(`0x${'0'.repeat(40)}`), true);
});

test('evmChecksumAddress equals ethers.getAddress and viem getAddress', () => {
  fc.assert(
    fc.property(body20, (body) => {
      const lower = `0x${toHex(body)}`;
      const ours = evmChecksumAddress(body);
      assert.equal(ours, ethersGetAddress(lower));
      assert.equal(ours, viemGetAddress(lower));
      assert.equal(isEvmAddress(ours), true);
      assert.equal(isEvmAddress(lower), true);
      assert.equal(isEvmAddress(`0x${toHex(body).toUpperCase()}`), true);
    }),
    { numRuns: 200 },
  );
  assert.throws(() => evmChecksumAddress(new Uint8Array(19)), RangeError);
});

test('isEvmAddress agrees with viem strict isAddress on random mixed-case texts', () => {
  fc.assert(
    fc.property(body20, fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), (body, upper) => {
      const digits = toHex(body)
        .split('')
        .map((c, i) => (upper[i] ? c.toUpperCase() : c))
        .join('');
      const text = `0x${digits}`;
      // viem's strict mode also refuses all-upper-case letters; EIP-55 treats them, like all lower
      // case, as carrying no checksum, and so does Cashgate (a checksum is enforced on mixed case).
      const noChecksum = digits === digits.toUpperCase();
      assert.equal(isEvmAddress(text), noChecksum || viemIsAddress(text, { strict: true }), text);
    }),
    { numRuns: 200 },
  );
});

test('TRON: known addresses and their hex payloads', () => {
  assert.equal(isTronAddress(USDT_TRC20), true);
  assert.equal(toHex(bs58check.decode(USDT_TRC20)), USDT_TRC20_HEX);
  assert.equal(tronAddress(fromHex(USDT_TRC20_HEX.slice(2))), USDT_TRC20);
  assert.equal(isTronAddress(TRON_ZERO), true);
  assert.equal(tronAddress(new Uint8Array(20)), TRON_ZERO);
  assert.equal(isChainAddress('TRON', USDT_TRC20), true);
  assert.equal(isChainAddress('ETH', USDT_TRC20), false);
  assert.equal(isChainAddress('BSC', USDT_TRC20), false);
  assert.throws(() => tronAddress(new Uint8Array(21)), RangeError);
});

test('TRON: corrupted addresses fail', () => {
  // Every single-character substitution, checked against the bs58check oracle.
  for (const base of [USDT_TRC20, TRON_ZERO]) {
    for (let i = 0; i < base.length; i++) {
      const original = base.charAt(i);
      const replacement = BASE58_ALPHABET.charAt((BASE58_ALPHABET.indexOf(original) + 1) % BASE58_ALPHABET.length);
      const bad = base.slice(0, i) + replacement + base.slice(i + 1);
      assert.equal(isTronAddress(bad), false, bad);
      assert.equal(oracleIsTron(bad), false, `oracle agrees on ${bad}`);
      for (const confusable of ['0', 'O', 'I', 'l']) {
        assert.equal(isTronAddress(base.slice(0, i) + confusable + base.slice(i + 1)), false);
      }
    }
    assert.equal(isTronAddress(base.slice(0, 33)), false, '33 chars');
    assert.equal(isTronAddress(`${base}1`), false, '35 chars');
    assert.equal(isTronAddress(base.toLowerCase()), false);
    assert.equal(isTronAddress(` ${base}`), false);
  }
  // Valid checksums over wrong version bytes or lengths.
  const body = fromHex(USDT_TRC20_HEX.slice(2));
  for (const version of [0x00, 0x40, 0x42, 0xa0]) {
    const text = bs58check.encode(Uint8Array.from([version, ...body]));
    assert.doesNotThrow(() => bs58check.decode(text));
    assert.equal(isTronAddress(text), false, `version 0x${version.toString(16)}: ${text}`);
  }
  for (const payload of [Uint8Array.from([0x41, ...body, 0]), Uint8Array.from([0x41, ...body.subarray(1)])]) {
    assert.equal(isTronAddress(bs58check.encode(payload)), false);
  }
  assert.equal(isTronAddress(''), false);
  assert.equal(isTronAddress(`0x${USDT_TRC20_HEX.slice(2)}`), false);
  assert.equal(isTronAddress(USDT_TRC20_HEX), false);
});

test('tronAddress agrees with bs58check.encode of 0x41 + body; isTronAddress agrees with the oracle', () => {
  fc.assert(
    fc.property(body20, (body) => {
      const ours = tronAddress(body);
      assert.equal(ours, bs58check.encode(Uint8Array.from([0x41, ...body])));
      assert.equal(ours.length, 34);
      assert.ok(ours.startsWith('T'));
      assert.equal(isTronAddress(ours), true);
    }),
    { numRuns: 200 },
  );
  fc.assert(
    fc.property(
      fc.string({ unit: fc.constantFrom(...BASE58_ALPHABET.split('')), minLength: 33, maxLength: 35 }),
      (text) => {
        assert.equal(isTronAddress(text), oracleIsTron(text), text);
      },
    ),
    { numRuns: 200 },
  );
});

test('trade hashes: per-chain formats', () => {
  const digits = 'ab'.repeat(32);
  assert.equal(isTradeHash('TRON', digits), true);
  assert.equal(isTradeHash('TRON', digits.toUpperCase()), true);
  assert.equal(isTradeHash('TRON', `0x${digits}`), false);
  assert.equal(isTradeHash('TRON', digits.slice(1)), false);
  assert.equal(isTradeHash('TRON', `${digits}0`), false);
  assert.equal(isTradeHash('TRON', `${digits.slice(1)}g`), false);
  for (const chain of ['ETH', 'BSC'] as const) {
    assert.equal(isTradeHash(chain, `0x${digits}`), true);
    assert.equal(isTradeHash(chain, `0x${digits.toUpperCase()}`), true);
    assert.equal(isTradeHash(chain, digits), false, 'no 0x');
    assert.equal(isTradeHash(chain, `0X${digits}`), false);
    assert.equal(isTradeHash(chain, `0x${digits.slice(1)}`), false);
    assert.equal(isTradeHash(chain, `0x${digits}00`), false);
    assert.equal(isTradeHash(chain, `0x${digits.slice(1)}z`), false);
  }
  for (const chain of CHAINS) {
    assert.equal(isTradeHash(chain, ''), false);
    for (let i = 0; i < 20; i++) {
      const hash = randomTradeHash(chain);
      assert.equal(isTradeHash(chain, hash), true, hash);
      assert.equal(hash, hash.toLowerCase());
    }
  }
  assert.notEqual(randomTradeHash('ETH'), randomTradeHash('ETH'));
  assert.ok(randomTradeHash('ETH').startsWith('0x'));
  assert.equal(randomTradeHash('TRON').length, 64);
});

const INDEXES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1000, 65_535, 1_000_000, MAX_ADDRESS_INDEX - 1, MAX_ADDRESS_INDEX];

test('EVM deposit addresses match ethers from the xpub and from the mnemonic', () => {
  const deriver = new DepositAddressDeriver('evm', SANDBOX_XPUBS.evm);
  const ethersAccount = HDNodeWallet.fromExtendedKey(SANDBOX_XPUBS.evm);
  for (const i of INDEXES) {
    const ours = deriver.address(i);
    assert.equal(ours, ethersAccount.derivePath(`0/${i}`).address, `xpub index ${i}`);
    assert.equal(ours, mnemonicRoot.derivePath(`m/44'/60'/0'/0/${i}`).address, `mnemonic index ${i}`);
    assert.equal(isEvmAddress(ours), true);
    assert.equal(deriver.path(i), `m/44'/60'/0'/0/${i}`);
  }
  assert.equal(deriver.address(0), '0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
});

test('TRON deposit addresses match the TRON form of ethers-derived addresses', () => {
  const deriver = new DepositAddressDeriver('tron', SANDBOX_XPUBS.tron);
  const ethersAccount = HDNodeWallet.fromExtendedKey(SANDBOX_XPUBS.tron);
  for (const i of INDEXES) {
    const ours = deriver.address(i);
    assert.equal(
      ours,
      oracleTronFromEvm(mnemonicRoot.derivePath(`m/44'/195'/0'/0/${i}`).address),
      `mnemonic index ${i}`,
    );
    assert.equal(ours, oracleTronFromEvm(ethersAccount.derivePath(`0/${i}`).address), `xpub index ${i}`);
    assert.equal(isTronAddress(ours), true);
  }
  const first = deriver.address(0);
  console.log(`TRON m/44'/195'/0'/0/0 of the test mnemonic: ${first}`);
  assert.equal(first, 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
  assert.equal(deriver.path(7), "m/44'/195'/0'/0/7");
});

test('SANDBOX_XPUBS are the neutered account keys of the test mnemonic', () => {
  for (const family of ['tron', 'evm'] as const) {
    assert.equal(SANDBOX_XPUBS[family], mnemonicRoot.derivePath(ACCOUNT_PATHS[family]).neuter().extendedKey);
    const parsed = parseAccountXpub(SANDBOX_XPUBS[family]);
    assert.ok('key' in parsed, 'problem' in parsed ? parsed.problem : '');
    assert.equal(parsed.key.depth, 3);
    assert.equal(parsed.key.privateKey, null);
  }
});

test('address index range', () => {
  const deriver = new DepositAddressDeriver('evm', SANDBOX_XPUBS.evm);
  for (const bad of [-1, 1.5, MAX_ADDRESS_INDEX + 1, 2 ** 32, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => deriver.address(bad), RangeError, String(bad));
    assert.throws(() => deriver.path(bad), RangeError, String(bad));
  }
});

/** Re-encodes an extended key with other version bytes (valid checksum). */
function withVersion(extendedKey: string, version: number): string {
  const bytes = Uint8Array.from(bs58check.decode(extendedKey));
  new DataView(bytes.buffer).setUint32(0, version, false);
  return bs58check.encode(bytes);
}

function problemOf(text: string): string {
  const parsed = parseAccountXpub(text);
  assert.ok('problem' in parsed, `expected a problem for ${text}`);
  return parsed.problem;
}

test('parseAccountXpub refuses private keys, wrong depths and garbage', () => {
  const accountPrivate = mnemonicRoot.derivePath("m/44'/60'/0'");
  const xprv = accountPrivate.extendedKey;
  assert.ok(xprv.startsWith('xprv'));
  assert.match(problemOf(xprv), /must be an extended PUBLIC key: Cashgate never holds private keys/);
  assert.match(problemOf(mnemonicRoot.extendedKey), /PUBLIC key/);
  assert.match(problemOf(withVersion(xprv, 0x04358394)), /PUBLIC key/, 'tprv');
  // Private key material under a public version.
  assert.match(problemOf(withVersion(xprv, 0x0488b21e)), /PUBLIC key/);

  const depth4 = mnemonicRoot.derivePath("m/44'/60'/0'/0").neuter().extendedKey;
  assert.match(
    problemOf(depth4),
    /must be the account-level key \(depth 3: m\/44'\/195'\/0' for TRON, m\/44'\/60'\/0' for EVM\), found depth 4/,
  );
  const depth0 = mnemonicRoot.neuter().extendedKey;
  assert.match(problemOf(depth0), /account-level key .*found depth 0/);

  assert.match(problemOf(withVersion(SANDBOX_XPUBS.evm, 0x043587cf)), /must be an xpub/, 'tpub');

  for (const garbage of ['', 'hello', 'xpub', `${SANDBOX_XPUBS.evm.slice(0, -1)}1`, ` ${SANDBOX_XPUBS.evm}`]) {
    assert.match(problemOf(garbage), /not an extended key/, garbage);
  }
  assert.match(problemOf(USDT_TRC20), /not an extended key: 78 bytes expected, found 21/);

  // A public key that is not a curve point.
  const offCurve = Uint8Array.from(bs58check.decode(SANDBOX_XPUBS.evm));
  offCurve.fill(0xff, 46);
  offCurve[45] = 0x02;
  assert.match(problemOf(bs58check.encode(offCurve)), /not a valid extended public key/);

  assert.throws(() => new DepositAddressDeriver('evm', xprv), /never holds private keys/);
  assert.throws(() => new DepositAddressDeriver('tron', depth4), /depth 3/);
});

test('keyId: stable, per xpub', () => {
  const a = new DepositAddressDeriver('tron', SANDBOX_XPUBS.tron);
  const b = new DepositAddressDeriver('tron', SANDBOX_XPUBS.tron);
  const c = new DepositAddressDeriver('evm', SANDBOX_XPUBS.evm);
  assert.match(a.keyId, /^[0-9a-f]{16}$/);
  assert.equal(a.keyId, b.keyId);
  assert.notEqual(a.keyId, c.keyId);
  assert.equal(a.keyId, createHash('sha256').update(SANDBOX_XPUBS.tron).digest('hex').slice(0, 16));
  assert.equal(c.keyId, createHash('sha256').update(SANDBOX_XPUBS.evm).digest('hex').slice(0, 16));
  assert.equal(a.family, 'tron');
  assert.equal(c.path(7), "m/44'/60'/0'/0/7");
});
