import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hex } from '@scure/base';
import fc from 'fast-check';
import { utils as tronUtils } from 'tronweb';
import { tronAddress } from '../src/rails/chain/addresses.js';
import { privateKeyFromHex } from '../src/rails/chain/evm-tx.js';
import {
  buildTrc20Transfer,
  decodeTrc20Transfer,
  recoverTronSigner,
  signTronTransaction,
  tronAddressOfKey,
  tronFromHex,
  tronHex,
  tronTxId,
  type Trc20TransferRequest,
} from '../src/rails/chain/tron-tx.js';

/**
 * Cashgate's TRON transactions against tronweb (npm), an independent implementation built on the
 * protocol's own protobuf definitions: the same JSON must give the same bytes and txID, tronweb must
 * accept Cashgate's signatures, and the reader must give back what was built.
 */

const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const Proto = (globalThis as unknown as { TronWebProto: any }).TronWebProto;

const body20 = fc.uint8Array({ minLength: 20, maxLength: 20 });
const key32 = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .filter((key) => key.some((b) => b !== 0) && key[0] !== 0xff);
const request = fc.record({
  owner: body20.map(tronAddress),
  contract: body20.map(tronAddress),
  to: body20.map(tronAddress),
  units: fc.bigInt({ min: 1n, max: 2n ** 256n - 1n }),
  refBlock: fc.record({
    number: fc.bigInt({ min: 0n, max: 2n ** 40n }),
    id: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => hex.encode(b)),
    timestamp: fc.integer({ min: 1_500_000_000_000, max: 2_500_000_000_000 }),
  }),
  expirationMs: fc.integer({ min: 1, max: 24 * 60 * 60 * 1000 }),
  timestamp: fc.integer({ min: 1_500_000_000_000, max: 2_500_000_000_000 }),
  feeLimitSun: fc.bigInt({ min: 1n, max: 15_000_000_000n }),
});

const sample = (): Trc20TransferRequest => ({
  owner: 'TPL66VK2gCXNCD7EJg9pgJRfqcRazjhUZY',
  contract: USDT,
  to: 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb',
  units: 25_000_000n,
  refBlock: { number: 70_000_123n, id: `00000000042c1dfb${'ab'.repeat(24)}`, timestamp: 1_700_000_000_000 },
  expirationMs: 60_000,
  timestamp: 1_700_000_001_000,
  feeLimitSun: 30_000_000n,
});

describe('TRON transactions', () => {
  it('derives addresses from keys as tronweb does, and the known vectors', () => {
    const known = privateKeyFromHex('da146374a75310b9666e834ee4ad0866d6f4035967bfc76217c5a495fff9f0d0');
    // tronweb's own examples pair this key with this address.
    assert.equal(tronAddressOfKey(known), 'TPL66VK2gCXNCD7EJg9pgJRfqcRazjhUZY');
    assert.equal(tronHex(USDT), '41a614f803b6fd780986a42c78ec9c7f77e6ded13c');
    assert.equal(tronFromHex('41a614f803b6fd780986a42c78ec9c7f77e6ded13c'), USDT);
    assert.equal(tronFromHex(`41${'00'.repeat(20)}`), 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb');
    fc.assert(
      fc.property(key32, (key) => {
        const ours = tronAddressOfKey(key);
        assert.equal(ours, tronUtils.address.fromPrivateKey(hex.encode(key)));
        assert.equal(tronHex(ours), tronUtils.address.toHex(ours).toLowerCase());
        assert.equal(tronFromHex(tronHex(ours)), ours);
      }),
      { numRuns: 50 },
    );
    assert.throws(() => tronHex('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u'), /not a TRON address/);
    assert.throws(() => tronFromHex(`42${'00'.repeat(20)}`), /41-prefixed/);
  });

  it('writes the same raw bytes and txID as tronweb for the same JSON', () => {
    fc.assert(
      fc.property(request, (req) => {
        const tx = buildTrc20Transfer(req);
        const pb = tronUtils.transaction.txJsonToPb({ raw_data: tx.rawData, visible: false });
        assert.equal(tronUtils.transaction.txPbToRawDataHex(pb).toLowerCase(), tx.rawDataHex);
        assert.equal(tronUtils.transaction.txPbToTxID(pb).replace(/^0x/, ''), tx.txID);
        assert.equal(tronTxId(tx.rawDataHex), tx.txID);
        assert.ok(
          tronUtils.transaction.txCheck({
            txID: tx.txID,
            raw_data: tx.rawData,
            raw_data_hex: tx.rawDataHex,
            visible: false,
          }),
          'tronweb finds the JSON, the hex and the txID in agreement',
        );
      }),
      { numRuns: 100 },
    );
  });

  it('puts every field where the protocol’s protobuf definition reads it', () => {
    const req = sample();
    const tx = buildTrc20Transfer(req);
    const raw = Proto.Transaction.raw.deserializeBinary(hex.decode(tx.rawDataHex));
    // ref_block_bytes: bytes 6..8 of the number (70,000,123 = 0x42c1dfb); ref_block_hash: bytes 8..16 of the id.
    assert.equal(hex.encode(raw.getRefBlockBytes_asU8()), '1dfb');
    assert.equal(hex.encode(raw.getRefBlockHash_asU8()), 'abababababababab');
    assert.equal(raw.getExpiration(), 1_700_000_060_000);
    assert.equal(raw.getTimestamp(), 1_700_000_001_000);
    assert.equal(raw.getFeeLimit(), 30_000_000);
    const contracts = raw.getContractList();
    assert.equal(contracts.length, 1);
    assert.equal(contracts[0].getType(), Proto.Transaction.Contract.ContractType.TRIGGERSMARTCONTRACT);
    assert.equal(contracts[0].getType(), 31);
    assert.equal(contracts[0].getParameter().getTypeUrl(), 'type.googleapis.com/protocol.TriggerSmartContract');
    const trigger = Proto.TriggerSmartContract.deserializeBinary(contracts[0].getParameter().getValue_asU8());
    assert.equal(hex.encode(trigger.getOwnerAddress_asU8()), tronHex(req.owner));
    assert.equal(hex.encode(trigger.getContractAddress_asU8()), tronHex(USDT));
    assert.equal(trigger.getCallValue(), 0);
    assert.equal(
      hex.encode(trigger.getData_asU8()),
      `a9059cbb${'00'.repeat(32)}${(25_000_000).toString(16).padStart(64, '0')}`,
    );
    assert.deepEqual(tx.rawData, {
      contract: [
        {
          parameter: {
            value: {
              data: hex.encode(trigger.getData_asU8()),
              owner_address: tronHex(req.owner),
              contract_address: tronHex(USDT),
            },
            type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
          },
          type: 'TriggerSmartContract',
        },
      ],
      ref_block_bytes: '1dfb',
      ref_block_hash: 'abababababababab',
      expiration: 1_700_000_060_000,
      fee_limit: 30_000_000,
      timestamp: 1_700_000_001_000,
    });
  });

  it('signs so that tronweb recovers the owner, as tronweb itself signs', () => {
    fc.assert(
      fc.property(key32, request, (key, req) => {
        const owner = tronAddressOfKey(key);
        const tx = buildTrc20Transfer({ ...req, owner });
        const signature = signTronTransaction(tx.txID, key);
        assert.match(signature, /^[0-9a-f]{128}(1b|1c)$/);
        assert.equal(tronUtils.crypto.ecRecover(tx.txID, signature).toLowerCase(), tronHex(owner));
        const signed = tronUtils.crypto.signTransaction(hex.encode(key), {
          txID: tx.txID,
          raw_data: tx.rawData,
          raw_data_hex: tx.rawDataHex,
        });
        assert.equal(signed.signature[0]?.toLowerCase(), signature);
        assert.equal(recoverTronSigner(tx.txID, signature), owner);
        // java-tron writes v as the bare recovery id (ECDSASignature.toByteArray) and reads both.
        const bare = `${signature.slice(0, 128)}0${Number.parseInt(signature.slice(128), 16) - 27}`;
        assert.equal(recoverTronSigner(tx.txID, bare), owner);
      }),
      { numRuns: 25 },
    );
    const tx = buildTrc20Transfer(sample());
    const key = privateKeyFromHex(`0x${'5c'.repeat(32)}`);
    assert.notEqual(recoverTronSigner(tx.txID, signTronTransaction(tronTxId('00'), key)), tronAddressOfKey(key));
    assert.throws(() => recoverTronSigner(tx.txID, `${'11'.repeat(64)}05`), /recovery byte/);
    assert.throws(() => recoverTronSigner(tx.txID, '11'.repeat(64)), /65 bytes/);
  });

  it('reads back what it built, and refuses anything else', () => {
    fc.assert(
      fc.property(request, (req) => {
        const decoded = decodeTrc20Transfer(buildTrc20Transfer(req).rawDataHex);
        const expected = buildTrc20Transfer(req).rawData;
        assert.deepEqual(decoded, {
          owner: req.owner,
          contract: req.contract,
          to: req.to,
          units: req.units,
          refBlockBytes: expected.ref_block_bytes,
          refBlockHash: expected.ref_block_hash,
          expiration: req.refBlock.timestamp + req.expirationMs,
          timestamp: req.timestamp,
          feeLimit: req.feeLimitSun,
        });
      }),
      { numRuns: 100 },
    );
    const tx = buildTrc20Transfer(sample());
    const pb = () => tronUtils.transaction.txJsonToPb({ raw_data: structuredClone(tx.rawData), visible: false });
    const variant = (change: (raw: any) => void): string => {
      const transaction = pb();
      const raw = transaction.getRawData();
      change(raw);
      return hex.encode(raw.serializeBinary());
    };
    const refusals: [string, string, RegExp][] = [
      ['an extra field (data)', variant((raw) => raw.setData(Uint8Array.of(1, 2))), /unexpected field 10/],
      ['no fee limit', variant((raw) => raw.setFeeLimit(0)), /no fee limit/],
      ['a TRX transfer', variant((raw) => raw.getContractList()[0].setType(1)), /not a TriggerSmartContract/],
      [
        'TRX attached to the call',
        (() => {
          const json = structuredClone(tx.rawData) as any;
          json.contract[0].parameter.value.call_value = 5;
          return tronUtils.transaction
            .txPbToRawDataHex(tronUtils.transaction.txJsonToPb({ raw_data: json }))
            .toLowerCase();
        })(),
        /unexpected field 3/,
      ],
      [
        'another call',
        (() => {
          const json = structuredClone(tx.rawData) as any;
          json.contract[0].parameter.value.data = `095ea7b3${json.contract[0].parameter.value.data.slice(8)}`;
          return tronUtils.transaction
            .txPbToRawDataHex(tronUtils.transaction.txJsonToPb({ raw_data: json }))
            .toLowerCase();
        })(),
        /not transfer/,
      ],
      ['a truncated transaction', tx.rawDataHex.slice(0, -4), /past the end|canonically|missing/],
      ['a non-canonical varint', tx.rawDataHex.replace(/^0a02/, '0a8200'), /canonically/],
      ['two raw copies', tx.rawDataHex + tx.rawDataHex, /appears twice/],
    ];
    for (const [what, raw, error] of refusals) assert.throws(() => decodeTrc20Transfer(raw), error, what);
  });

  it('refuses requests java-tron would refuse or that cannot be written', () => {
    assert.throws(() => buildTrc20Transfer({ ...sample(), units: 0n }), /at least one unit/);
    assert.throws(() => buildTrc20Transfer({ ...sample(), expirationMs: 24 * 60 * 60 * 1000 + 1 }), /24 h/);
    assert.throws(() => buildTrc20Transfer({ ...sample(), feeLimitSun: 0n }), /fee limit/);
    assert.throws(
      () => buildTrc20Transfer({ ...sample(), to: '0x0000000000000000000000000000000000000000' }),
      /TRON address/,
    );
    assert.throws(
      () => buildTrc20Transfer({ ...sample(), refBlock: { ...sample().refBlock, id: 'abcd' } }),
      /32 bytes/,
    );
  });
});
