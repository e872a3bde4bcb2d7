import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { IpWhitelist, normalizeAddress, whitelistEntryProblem } from '../src/auth/ip-whitelist.js';
import { grants } from '../src/auth/permissions.js';
import { KeyRateLimiter } from '../src/auth/rate-limit.js';
import { describeFailure, type ApiFailure } from '../src/http/failures.js';
import { LANGUAGES, languageFromAcceptLanguage } from '../src/http/language.js';
import { FormattedString, StringEnum, validateInput } from '../src/http/validation.js';

describe('IP whitelist', () => {
  it('matches exact IPv4 and IPv6 addresses and CIDR ranges', () => {
    const list = new IpWhitelist(['192.0.2.10', '10.0.0.0/8', '2001:db8::/32', '::1']);
    assert.equal(list.allows('192.0.2.10'), true);
    assert.equal(list.allows('192.0.2.11'), false);
    assert.equal(list.allows('10.255.1.2'), true);
    assert.equal(list.allows('11.0.0.1'), false);
    assert.equal(list.allows('2001:db8:1::5'), true);
    assert.equal(list.allows('2001:db9::5'), false);
    assert.equal(list.allows('::1'), true);
    assert.equal(list.allows('::ffff:10.1.1.1'), true, 'IPv4-mapped IPv6 addresses match IPv4 entries');
    assert.equal(list.allows('garbage'), false);
  });

  it('treats 0.0.0.0 as any address', () => {
    const any = new IpWhitelist(['0.0.0.0']);
    assert.equal(any.allows('203.0.113.1'), true);
    assert.equal(any.allows('2001:db8::1'), true);
  });

  it('validates entries', () => {
    for (const good of ['1.2.3.4', '1.2.3.0/24', '0.0.0.0', '::1', '2001:db8::/128', '10.0.0.0/0']) {
      assert.equal(whitelistEntryProblem(good), undefined, good);
    }
    for (const bad of ['1.2.3.4/33', '2001:db8::/129', '1.2.3', 'example.com', '1.2.3.4/8/1', '1.2.3.4/x', '']) {
      assert.notEqual(whitelistEntryProblem(bad), undefined, bad);
    }
    assert.equal(normalizeAddress('::FFFF:1.2.3.4'), '1.2.3.4');
  });
});

describe('permissions', () => {
  it('grants what is listed, or everything with all', () => {
    assert.equal(grants(['query'], 'query'), true);
    assert.equal(grants(['query'], 'balance'), false);
    assert.equal(grants(['all'], 'bra.transfer'), true);
  });
});

describe('per-key rate limiter', () => {
  it('allows a burst of the limit, then refills evenly', () => {
    const limiter = new KeyRateLimiter(60);
    for (let i = 0; i < 60; i += 1) assert.equal(limiter.take('A', 0), 0);
    assert.equal(limiter.take('A', 0), 1000, 'one token per second');
    assert.equal(limiter.take('B', 0), 0, 'keys are independent');
    assert.equal(limiter.take('A', 999), 1);
    assert.equal(limiter.take('A', 1000), 0);
  });

  it('forgets only buckets that are full again', () => {
    const limiter = new KeyRateLimiter(2);
    limiter.take('A', 0);
    limiter.take('A', 0);
    limiter.prune(1_000);
    assert.notEqual(limiter.take('A', 1_000), 0, 'a drained bucket is kept');
    limiter.prune(120_000);
    assert.equal(limiter.take('A', 120_000), 0);
  });
});

describe('language', () => {
  it('picks the best supported Accept-Language', () => {
    assert.equal(languageFromAcceptLanguage(undefined), 'en');
    assert.equal(languageFromAcceptLanguage('pt-BR,pt;q=0.9'), 'pt-BR');
    assert.equal(languageFromAcceptLanguage('pt-PT'), 'pt-BR');
    assert.equal(languageFromAcceptLanguage('fr-FR,es;q=0.8,en;q=0.5'), 'es');
    assert.equal(languageFromAcceptLanguage('en;q=0.2,es;q=0.9'), 'es');
    assert.equal(languageFromAcceptLanguage('de'), 'en');
    assert.equal(languageFromAcceptLanguage('es;q=0'), 'en');
  });
});

describe('failure table', () => {
  const samples: ApiFailure[] = [
    { kind: 'header_missing', header: 'nonce' },
    { kind: 'header_malformed', header: 'timestamp', expected: 'timestamp' },
    { kind: 'unknown_access_key' },
    { kind: 'signature_mismatch' },
    { kind: 'timestamp_outside_window', windowSeconds: 300, serverTime: 1 },
    { kind: 'nonce_reused' },
    { kind: 'key_not_active', activeAt: 0 },
    { kind: 'key_disabled' },
    { kind: 'key_deleted' },
    { kind: 'ip_not_whitelisted', ip: '1.2.3.4' },
    { kind: 'permission_denied', permission: 'query' },
    { kind: 'rate_limited', limitPerMinute: 3, retryAfterSeconds: 1 },
    { kind: 'route_not_found', method: 'GET', path: '/x' },
    { kind: 'unsupported_media_type', contentType: 'text/plain' },
    { kind: 'body_not_json', detail: 'x' },
    { kind: 'body_too_large', limitBytes: 1 },
    { kind: 'body_not_object' },
    { kind: 'unknown_fields', fields: ['a'] },
    { kind: 'invalid_field', field: 'f', rule: { rule: 'required' } },
    { kind: 'internal_error', requestId: 'req_1' },
  ];
  const expectedStatus: Record<string, number> = { '300': 400, '301': 403, '307': 401, '429': 429, '500': 500 };

  it('gives every failure a code, its HTTP status and a distinct text in each language', () => {
    for (const failure of samples) {
      const en = describeFailure(failure, 'en');
      assert.equal(en.status, expectedStatus[en.code], failure.kind);
      for (const lang of LANGUAGES) {
        const text = describeFailure(failure, lang).text;
        assert.ok(text.length > 5, `${failure.kind} ${lang}`);
        if (lang !== 'en') assert.notEqual(text, en.text, `${failure.kind} is translated to ${lang}`);
      }
    }
  });

  it('maps 307 to signature faults and 301 to key state, IP and permission', () => {
    const codes = Object.fromEntries(samples.map((f) => [f.kind, describeFailure(f, 'en').code]));
    for (const kind of [
      'header_missing',
      'header_malformed',
      'unknown_access_key',
      'signature_mismatch',
      'timestamp_outside_window',
      'nonce_reused',
    ]) {
      assert.equal(codes[kind], '307', kind);
    }
    for (const kind of ['key_not_active', 'key_disabled', 'key_deleted', 'ip_not_whitelisted', 'permission_denied']) {
      assert.equal(codes[kind], '301', kind);
    }
  });
});

describe('input validation messages', () => {
  const schema = Type.Object({
    channel: StringEnum(['PIX', 'BOLETO']),
    name: Type.String({ maxLength: 5 }),
    count: Type.Optional(Type.Integer({ minimum: 1 })),
    url: Type.Optional(Type.Union([FormattedString('url'), Type.Null()])),
    tags: Type.Optional(Type.Array(Type.String(), { maxItems: 1 })),
  });
  const message = (input: unknown) => validateInput(schema, input)?.message;

  it('names the field and the rule', () => {
    assert.equal(message({ channel: 'PIX', name: 'abc' }), undefined);
    assert.equal(message({ name: 'abc' }), 'channel is required');
    assert.equal(message({ channel: 'CARD', name: 'abc' }), 'channel must be one of PIX, BOLETO');
    assert.equal(message({ channel: 'PIX', name: 'abcdef' }), 'name must be at most 5 characters long');
    assert.equal(message({ channel: 'PIX', name: 1 }), 'name must be a string');
    assert.equal(message({ channel: 'PIX', name: 'a', count: 1.5 }), 'count must be an integer');
    assert.equal(message({ channel: 'PIX', name: 'a', count: 0 }), 'count must be at least 1');
    assert.equal(message({ channel: 'PIX', name: 'a', url: 'ftp://x' }), 'url must be an http or https URL');
    assert.equal(message({ channel: 'PIX', name: 'a', url: 3 }), 'url must be a string or null');
    assert.equal(message({ channel: 'PIX', name: 'a', tags: ['a', 'b'] }), 'tags must have at most 1 item');
    assert.equal(message({ channel: 'PIX', name: 'a', tags: [1] }), 'tags.0 must be a string');
  });

  it('refuses unknown members and non-objects', () => {
    assert.equal(message({ channel: 'PIX', name: 'a', b: 1, a: 2 }), 'unknown fields: a, b');
    assert.equal(message([]), 'body must be a JSON object');
    assert.equal(message(null), 'body must be a JSON object');
  });
});
