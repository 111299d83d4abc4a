// Which addresses a fetched link may reach. A knowledge-base link is fetched
// from inside the operator's network, so without this guard any user could
// read the cloud metadata service (169.254.169.254), admin ports on loopback,
// or hosts on the private network. IPv6 forms that embed an IPv4 address
// (::ffff:10.0.0.1, NAT64, 6to4) are judged by the IPv4 address inside.

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
  ['::', 96, 'IPv4-compatible (deprecated)'],
  ['100::', 64, 'discard'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local (private)'],
  ['ff00::', 8, 'multicast'],
];

function buildList(ranges: [string, number, string][], family: 'ipv4' | 'ipv6') {
  return ranges.map(([net, prefix, label]) => {
    const list = new BlockList();
    list.addSubnet(net, prefix, family);
    return { list, label };
  });
}
const V4 = buildList(V4_RANGES, 'ipv4');
const V6 = buildList(V6_RANGES, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (accepts a trailing dotted IPv4 and a zone id). */
function ipv6Groups(address: string): number[] {
  let addr = address.replace(/%.*$/, '').toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(addr);
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    addr = addr.slice(0, -v4[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = addr.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16) || 0);
}

function embeddedIPv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return v4(g[6], g[7]); // ::ffff:a.b.c.d (IPv4-mapped)
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4(g[6], g[7]); // 64:ff9b::/96 (NAT64)
  if (g[0] === 0x2002) return v4(g[1], g[2]); // 2002::/16 (6to4)
  return undefined;
}

/**
 * Why an address must not be fetched ("loopback", "private", …), or undefined
 * when it is a public address. Anything that is not an IP address is refused.
 */
export function forbiddenAddressReason(address: string): string | undefined {
  if (isIPv4(address)) return V4.find((r) => r.list.check(address, 'ipv4'))?.label;
  if (isIPv6(address)) {
    const inner = embeddedIPv4(address);
    if (inner) return forbiddenAddressReason(inner);
    const plain = address.replace(/%.*$/, '');
    return V6.find((r) => r.list.check(plain, 'ipv6'))?.label;
  }
  return 'not an IP address';
}
