import { BlockList, isIP } from 'node:net';

/** `0.0.0.0` in a whitelist means any address. */
export const ANY_ADDRESS = '0.0.0.0';

/** Checks one whitelist entry: an IPv4/IPv6 address or CIDR range. Returns the problem, if any. */
export function whitelistEntryProblem(entry: string): string | undefined {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return `${entry} is not an IPv4 or IPv6 address or CIDR range`;
  if (prefix === undefined) return undefined;
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return `${entry} has a prefix length outside 0-${max}`;
  return undefined;
}

/** Strips the IPv4-mapped IPv6 form (::ffff:1.2.3.4) so IPv4 entries match dual-stack sockets. */
export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

/** A compiled IP whitelist. */
export class IpWhitelist {
  readonly #any: boolean;
  readonly #list = new BlockList();

  constructor(entries: readonly string[]) {
    this.#any = entries.includes(ANY_ADDRESS);
    for (const entry of entries) {
      const [address = '', prefix] = entry.split('/');
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.#list.addAddress(address, type);
      else this.#list.addSubnet(address, Number(prefix), type);
    }
  }

  allows(rawAddress: string): boolean {
    if (this.#any) return true;
    const address = normalizeAddress(rawAddress);
    const family = isIP(address);
    if (family === 0) return false;
    return this.#list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }
}
