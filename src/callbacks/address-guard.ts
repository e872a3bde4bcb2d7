import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { normalizeAddress } from '../auth/ip-whitelist.js';

/** Ranges a callback must never reach unless CALLBACK_ALLOW_PRIVATE_NETWORKS=true, with the reason shown. */
const FORBIDDEN_RANGES: readonly (readonly [string, number, 'ipv4' | 'ipv6', string])[] = [
  ['0.0.0.0', 8, 'ipv4', 'this-network'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fc00::', 7, 'ipv6', 'unique local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['64:ff9b:1::', 48, 'ipv6', 'local-use NAT64'],
];

const RANGES = FORBIDDEN_RANGES.map(([network, prefix, family, reason]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, family, reason };
});

/** IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4): the embedded address decides. */
const EMBEDDING_IPV4 = [
  /^(?:::ffff:|::ffff:0:|64:ff9b::|::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i,
  /^2002:()([0-9a-f]{1,4}):([0-9a-f]{1,4})(?::|$)/i,
];

function embeddedIpv4(address: string): string | undefined {
  for (const pattern of EMBEDDING_IPV4) {
    const match = pattern.exec(address);
    if (match === null) continue;
    if (match[1] !== undefined && match[1] !== '') return match[1];
    const high = parseInt(match[2] ?? '0', 16);
    const low = parseInt(match[3] ?? '0', 16);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return undefined;
}

/** Why a callback may not connect to `address` (e.g. "loopback"), or undefined when it may. */
export function forbiddenAddressReason(rawAddress: string): string | undefined {
  const address = embeddedIpv4(normalizeAddress(rawAddress)) ?? normalizeAddress(rawAddress);
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return RANGES.find((range) => range.family === type && range.list.check(address, type))?.reason;
}

/** A refused target: recorded as a failed attempt with this message. */
export class ForbiddenTargetError extends Error {
  readonly code = 'ECALLBACKFORBIDDEN';

  constructor(host: string, address: string, reason: string) {
    super(
      `target refused: ${host} resolves to ${address} (${reason}); set CALLBACK_ALLOW_PRIVATE_NETWORKS=true to allow private networks`,
    );
    this.name = 'ForbiddenTargetError';
  }
}

/**
 * A DNS lookup for outgoing sockets that drops forbidden addresses, so the check applies to the
 * address actually connected to: a name cannot resolve to a public address at check time and a
 * private one at connect time (DNS rebinding).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  const all: LookupAllOptions = { ...options, all: true };
  dnsLookup(hostname, all, (error, addresses: LookupAddress[]) => {
    if (error !== null) {
      callback(error, '', 0);
      return;
    }
    const allowed = addresses.filter((a) => forbiddenAddressReason(a.address) === undefined);
    const first = addresses[0];
    if (allowed.length === 0 && first !== undefined) {
      callback(
        new ForbiddenTargetError(hostname, first.address, forbiddenAddressReason(first.address) ?? 'forbidden'),
        '',
        0,
      );
      return;
    }
    if (options.all === true) {
      (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      return;
    }
    const chosen = allowed[0];
    callback(null, chosen?.address ?? '', chosen?.family ?? 4);
  });
};
