// IP address helpers shared by the webhook target policy and the per-client limits.
import { isIP } from 'node:net'

/** The eight 16-bit groups of a valid IPv6 address, written in any notation (::, a trailing dotted IPv4). */
export function expandIpv6(ipv6: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ipv6)
  const text = dotted
    ? `${ipv6.slice(0, dotted.index)}${((Number(dotted[1]) << 8) | Number(dotted[2])).toString(16)}:${((Number(dotted[3]) << 8) | Number(dotted[4])).toString(16)}`
    : ipv6
  const [head = '', tail] = text.split('::')
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)))
  const before = parse(head)
  const after = tail === undefined ? [] : parse(tail)
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after]
}

/**
 * The key under which a client address is counted: an IPv4 address as it is (an IPv4-mapped IPv6 address as its
 * IPv4 address), an IPv6 address by its /64, since one host usually holds a whole /64 and could rotate through it.
 */
export function clientAddressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped) return mapped[1] as string
  if (isIP(ip) !== 6) return ip
  const groups = expandIpv6(ip.replace(/%.*$/, ''))
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`
}
