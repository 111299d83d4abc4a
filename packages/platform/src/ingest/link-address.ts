// Which addresses a fetched link may reach. A knowledge-base link is fetched
// from inside the operator's network, so without this guard any user could
// read the cloud metadata service (169.254.169.254), admin ports on loopback,
// or hosts on the private network. IPv6 forms that embed an IPv4 address
// (::ffff:10.0.0.1, NAT64, 6to4, Teredo, …) are judged by the IPv4 address inside.

import { BlockList, isIPv4, isIPv6 } from 'node:net';

const V4_RANGES: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const V6_RANGES: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'discard'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local (private)'],
  ['ff00::', 8, 'multicast'],
];

function subnet(net: string, prefix: number, family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return list;
}
const V4 = V4_RANGES.map(([net, prefix, label]) => ({ list: subnet(net, prefix, 'ipv4'), label }));
const V6 = V6_RANGES.map(([net, prefix, label]) => ({ list: subnet(net, prefix, 'ipv6'), label }));

/** The sixteen bytes of an IPv6 address (accepts a trailing dotted IPv4; no zone id). */
function ipv6Bytes(address: string): number[] {
  let addr = address.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(addr);
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    addr = addr.slice(0, -v4[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = addr.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].flatMap((group) => {
    const g = parseInt(group, 16) || 0;
    return [g >> 8, g & 255];
  });
}

/**
 * Where RFC 6052 puts the IPv4 address behind a translation prefix of 48, 56,
 * 64 and 96 bits. Byte 8 is zero, and so are the bytes after the address.
 */
const RFC6052_LAYOUTS = [
  [6, 7, 9, 10],
  [7, 9, 10, 11],
  [9, 10, 11, 12],
  [12, 13, 14, 15],
];

/**
 * The IPv4 addresses a local-use NAT64 address (64:ff9b:1::/48) may carry: the
 * operator chooses the prefix length, so every layout whose zero bytes are zero.
 */
function localNat64IPv4s(b: number[]): number[][] {
  const fits = (at: number[]) => at[3] === 15 || (b[8] === 0 && b.slice(at[3] + 1).every((x) => x === 0));
  return RFC6052_LAYOUTS.filter(fits).map((at) => at.map((i) => b[i]));
}

/**
 * The IPv6 forms that carry an IPv4 address, and where it is in their bytes:
 * a connection to one can reach that IPv4 host (through this host's dual
 * stack, a NAT64 or SIIT translator, a 6to4 or Teredo relay).
 */
const EMBEDDINGS: [string, number, (b: number[]) => number[][]][] = [
  ['::ffff:0:0', 96, (b) => [b.slice(12)]], // IPv4-mapped (RFC 4291)
  ['::ffff:0:0:0', 96, (b) => [b.slice(12)]], // IPv4-translated (RFC 2765)
  ['::', 96, (b) => [b.slice(12)]], // IPv4-compatible (RFC 4291, deprecated)
  ['64:ff9b::', 96, (b) => [b.slice(12)]], // NAT64's well-known prefix (RFC 6052)
  ['64:ff9b:1::', 48, localNat64IPv4s], // local-use NAT64 (RFC 8215)
  ['2002::', 16, (b) => [b.slice(2, 6)]], // 6to4 (RFC 3056)
  ['2001::', 32, (b) => [b.slice(4, 8), b.slice(12).map((x) => x ^ 255)]], // Teredo (RFC 4380): the server, and the client (bits inverted)
];
const EMBEDDING_LISTS = EMBEDDINGS.map(([net, prefix, ipv4]) => ({ list: subnet(net, prefix, 'ipv6'), ipv4 }));

/** The IPv4 addresses inside an IPv6 address (none for most). */
function embeddedIPv4s(address: string): string[] {
  const form = EMBEDDING_LISTS.find((e) => e.list.check(address, 'ipv6'));
  return form ? form.ipv4(ipv6Bytes(address)).map((bytes) => bytes.join('.')) : [];
}

/**
 * Why an address must not be fetched ("loopback", "private", …), or undefined
 * when it is a public address. Anything that is not an IP address is refused.
 * An IPv6 address that carries IPv4 addresses is refused for any of them.
 */
export function forbiddenAddressReason(address: string): string | undefined {
  if (isIPv4(address)) return V4.find((r) => r.list.check(address, 'ipv4'))?.label;
  if (isIPv6(address)) {
    const plain = address.replace(/%.*$/, '');
    const own = V6.find((r) => r.list.check(plain, 'ipv6'))?.label;
    if (own) return own;
    for (const inner of embeddedIPv4s(plain)) {
      const reason = forbiddenAddressReason(inner);
      if (reason) return reason;
    }
    return undefined;
  }
  return 'not an IP address';
}
