import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Interface, Transaction, Wallet } from 'ethers';
import fc from 'fast-check';
import {
  addressOf,
  addressTopic,
  erc20BalanceOf,
  erc20Decimals,
  erc20Transfer,
  fromHex,
  integerBytes,
  privateKeyFromHex,
  rlpEncode,
  signEip1559,
  toHex,
  topicAddress,
  TRANSFER_TOPIC,
} from '../src/rails/chain/evm-tx.js';

const text = (value: string) => new TextEncoder().encode(value);
const ERC20 = new Interface([
  'function transfer(address to, uint256 value)',
  'function balanceOf(address owner)',
  'function decimals()',
]);

describe('EVM transactions', () => {
  it('encodes RLP as the yellow paper’s examples do', () => {
    const cases: [Parameters<typeof rlpEncode>[0], string][] = [
      [text('dog'), '0x83646f67'],
      [[text('cat'), text('dog')], '0xc88363617483646f67'],
      [new Uint8Array(0), '0x80'],
      [[], '0xc0'],
      [integerBytes(0n), '0x80'],
      [integerBytes(15n), '0x0f'],
      [integerBytes(1024n), '0x820400'],
      [[[], [[]], [[], [[]]]], '0xc7c0c1c0c3c0c1c0'],
      [
        text('Lorem ipsum dolor sit amet, consectetur adipisicing elit'),
        `0xb838${Buffer.from('Lorem ipsum dolor sit amet, consectetur adipisicing elit').toString('hex')}`,
      ],
    ];
    for (const [item, expected] of cases) assert.equal(toHex(rlpEncode(item)), expected);
  });

  it('signs EIP-1559 transactions byte for byte as an independent library does', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }).filter((key) => key.some((b) => b !== 0) && key[0] !== 0xff),
        fc.record({
          chainId: fc.bigInt({ min: 1n, max: 2n ** 32n }),
          nonce: fc.bigInt({ min: 0n, max: 2n ** 40n }),
          priority: fc.bigInt({ min: 0n, max: 10n ** 12n }),
          extra: fc.bigInt({ min: 0n, max: 10n ** 12n }),
          gasLimit: fc.bigInt({ min: 21_000n, max: 10_000_000n }),
          to: fc.uint8Array({ minLength: 20, maxLength: 20 }),
          value: fc.bigInt({ min: 0n, max: 10n ** 24n }),
          data: fc.uint8Array({ maxLength: 80 }),
        }),
        (key, t) => {
          const tx = {
            chainId: t.chainId,
            nonce: t.nonce,
            maxPriorityFeePerGas: t.priority,
            maxFeePerGas: t.priority + t.extra,
            gasLimit: t.gasLimit,
            to: toHex(t.to),
            value: t.value,
            data: toHex(t.data),
          };
          const signed = signEip1559(tx, key);
          const wallet = new Wallet(toHex(key));
          const theirs = Transaction.from({ ...tx, nonce: Number(tx.nonce), type: 2, accessList: [] });
          theirs.signature = wallet.signingKey.sign(theirs.unsignedHash);
          assert.equal(signed.raw, theirs.serialized);
          assert.equal(signed.hash, theirs.hash);
          assert.equal(Transaction.from(signed.raw).from, wallet.address, 'the sender recovers');
          assert.equal(addressOf(key), wallet.address);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('makes the ERC-20 calls, the Transfer topic and address topics', () => {
    const to = '0x52908400098527886E0F7030069857D2E4169EE7';
    assert.equal(erc20Transfer(to, 1_234_567n), ERC20.encodeFunctionData('transfer', [to, 1_234_567n]));
    assert.equal(erc20BalanceOf(to), ERC20.encodeFunctionData('balanceOf', [to]));
    assert.equal(erc20Decimals(), ERC20.encodeFunctionData('decimals', []));
    assert.ok(erc20Transfer(to, 1n).startsWith('0xa9059cbb'));
    assert.equal(TRANSFER_TOPIC, '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
    assert.equal(topicAddress(addressTopic(to)), to);
    assert.throws(() => topicAddress(`0x${'11'.repeat(32)}`), /not an address topic/);
    assert.throws(() => erc20Transfer(to, -5n), /uint256/);
    assert.throws(() => erc20Transfer(to, 2n ** 256n), /uint256/);
    assert.throws(() => erc20Transfer(`${to}00`, 1n), /20 bytes/);
    assert.throws(() => erc20BalanceOf(to.slice(0, -2)), /20 bytes/);
  });

  it('refuses a private key that is not one', () => {
    assert.throws(() => privateKeyFromHex('0x1234'), /32-byte secp256k1 private key/);
    assert.throws(() => privateKeyFromHex('00'.repeat(32)), /32-byte secp256k1 private key/);
    assert.throws(() => privateKeyFromHex('zz'.repeat(32)), /hex/);
    assert.equal(privateKeyFromHex(` 0x${'01'.repeat(32)} `).length, 32);
    assert.equal(fromHex('0x').length, 0);
  });
});
