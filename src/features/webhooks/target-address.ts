// Which IP addresses a webhook may never reach: the service's own host, its private network, cloud metadata.
import { BlockList, isIP } from 'node:net'
import { expandIpv6 } from '../../platform/ip-address.js'

type Family = 'ipv4' | 'ipv6'
type Subnet = readonly [network: string, prefix: number, family: Family]

const EMBEDS_IPV4 = 'an IPv6 address that embeds an IPv4 address'

/**
 * What a refusal of a name says: that it does not resolve to a public address, whether it resolves to a forbidden one
 * or to none; never which address, nor its kind (url-policy.ts says why).
 */
export const A_PUBLIC_ADDRESS = 'a public address'

// Order matters: the first match names the address in messages, so the narrow metadata entries come first.
const FORBIDDEN_SUBNETS: ReadonlyArray<readonly [description: string, subnets: readonly Subnet[]]> = [
  [
    'a cloud metadata address',
    [
      ['169.254.169.254', 32, 'ipv4'],
      ['fd00:ec2::254', 128, 'ipv6'],
    ],
  ],
  [
    'a loopback address',
    [
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ],
  ],
  // 0.0.0.0/8 and :: reach the local host on most systems when connected to.
  [
    'an unspecified address',
    [
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ],
  ],
  [
    'a private address',
    [
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['fc00::', 7, 'ipv6'],
      // Deprecated site-local IPv6, still routed by some networks.
      ['fec0::', 10, 'ipv6'],
    ],
  ],
  [
    'a link-local address',
    [
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ],
  ],
  ['a carrier-grade NAT address', [['100.64.0.0', 10, 'ipv4']]],
  // Prefixes whose addresses carry an IPv4 address that a gateway or the host itself may connect to: refused
  // whole, whatever IPv4 address they carry, as no webhook receiver needs them.
  [
    EMBEDS_IPV4,
    [
      // IPv4-compatible (::a.b.c.d), deprecated; :: and ::1 are named above, as they come first.
      ['::', 96, 'ipv6'],
      // NAT64, the well-known and the local-use prefix (RFC 6052, RFC 8215).
      ['64:ff9b::', 96, 'ipv6'],
      ['64:ff9b:1::', 48, 'ipv6'],
      // 6to4 and Teredo.
      ['2002::', 16, 'ipv6'],
      ['2001::', 32, 'ipv6'],
    ],
  ],
  ['a benchmarking address', [['198.18.0.0', 15, 'ipv4']]],
  // Documentation (RFC 5737, RFC 3849, RFC 9637) and IETF protocol assignments: routed nowhere on the internet, so
  // where they lead is a network's own choice.
  [
    'a documentation or protocol-assignment address',
    [
      ['192.0.0.0', 24, 'ipv4'],
      ['192.0.2.0', 24, 'ipv4'],
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      ['2001:db8::', 32, 'ipv6'],
      ['3fff::', 20, 'ipv6'],
    ],
  ],
  // Discard-only (RFC 6666): routed nowhere by design.
  ['a discard-only address', [['100::', 64, 'ipv6']]],
  [
    'a multicast address',
    [
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ],
  ],
  // 240.0.0.0/4 is reserved and ends with the limited broadcast address 255.255.255.255.
  ['a reserved or broadcast address', [['240.0.0.0', 4, 'ipv4']]],
]

// BlockList judges an IPv4-mapped IPv6 address (::ffff:a.b.c.d, also written ::ffff:xxxx:xxxx) by its IPv4 rules.
const FORBIDDEN_LISTS = FORBIDDEN_SUBNETS.map(([description, subnets]) => {
  const list = new BlockList()
  for (const [network, prefix, family] of subnets) list.addSubnet(network, prefix, family)
  return [description, list] as const
})

/** Why `ip` is forbidden as a webhook target ("a loopback address"), or undefined when it is a public address. */
export function describeForbiddenAddress(ip: string): string | undefined {
  // A zone id (fe80::1%eth0) would make BlockList miss the address; the zone does not change which network it is on.
  const address = ip.replace(/%.*$/, '')
  const version = isIP(address)
  if (version === 0) return 'not an IP address'
  const family: Family = version === 4 ? 'ipv4' : 'ipv6'
  const forbidden = FORBIDDEN_LISTS.find(([, list]) => list.check(address, family))?.[0]
  if (forbidden !== undefined || family === 'ipv4') return forbidden
  if (isIpv4Translated(address)) return EMBEDS_IPV4
  const isatap = isatapIpv4(address)
  const carried = isatap === undefined ? undefined : describeForbiddenAddress(isatap)
  return carried === undefined ? undefined : `${carried} inside an IPv6 address`
}

/**
 * IPv4-translated (::ffff:0:a.b.c.d, RFC 2765's SIIT), refused whole as the other prefixes that carry an IPv4 address:
 * a translator on the path delivers it to the IPv4 address inside. BlockList cannot hold this prefix (it reads
 * ::ffff:0:0/96 as the IPv4-mapped prefix), so its groups are compared.
 */
function isIpv4Translated(ipv6: string): boolean {
  const groups = expandIpv6(ipv6)
  return groups.slice(0, 4).every((group) => group === 0) && groups[4] === 0xffff && groups[5] === 0
}

/**
 * The IPv4 address in an ISATAP interface identifier (any prefix, then 0000:5efe or 0200:5efe, then the IPv4
 * address): such an address can appear under any routed prefix, so it is judged by the IPv4 address it carries.
 */
function isatapIpv4(ipv6: string): string | undefined {
  const groups = expandIpv6(ipv6)
  if (groups[4] !== 0x0000 && groups[4] !== 0x0200) return undefined
  if (groups[5] !== 0x5efe) return undefined
  const [high = 0, low = 0] = groups.slice(6)
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.')
}
