import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { describeForbiddenAddress } from '../../../src/features/webhooks/target-address.js'
import { assertWebhookUrl, PRIVATE_TARGETS_HINT } from '../../../src/features/webhooks/url-policy.js'
import { AppError } from '../../../src/platform/errors.js'

const FORBIDDEN: ReadonlyArray<readonly [address: string, description: string]> = [
  ['127.0.0.1', 'a loopback address'],
  ['127.255.255.254', 'a loopback address'],
  ['::1', 'a loopback address'],
  ['0.0.0.0', 'an unspecified address'],
  ['0.1.2.3', 'an unspecified address'],
  ['::', 'an unspecified address'],
  ['10.0.0.5', 'a private address'],
  ['10.255.255.255', 'a private address'],
  ['172.16.0.1', 'a private address'],
  ['172.31.255.255', 'a private address'],
  ['192.168.1.1', 'a private address'],
  ['fc00::1', 'a private address'],
  ['fd12:3456:789a::1', 'a private address'],
  ['169.254.169.254', 'a cloud metadata address'],
  ['fd00:ec2::254', 'a cloud metadata address'],
  ['169.254.0.1', 'a link-local address'],
  ['fe80::1', 'a link-local address'],
  ['fe80::1%eth0', 'a link-local address'],
  ['febf:ffff::1', 'a link-local address'],
  ['100.64.0.1', 'a carrier-grade NAT address'],
  ['100.127.255.255', 'a carrier-grade NAT address'],
  ['::ffff:127.0.0.1', 'a loopback address'],
  ['::ffff:7f00:1', 'a loopback address'],
  ['::ffff:10.0.0.5', 'a private address'],
  ['::ffff:a9fe:a9fe', 'a cloud metadata address'],
  ['224.0.0.1', 'a multicast address'],
  ['239.255.255.250', 'a multicast address'],
  ['ff02::1', 'a multicast address'],
  ['255.255.255.255', 'a reserved or broadcast address'],
  ['198.18.0.1', 'a benchmarking address'],
  ['198.19.255.255', 'a benchmarking address'],
  ['192.0.2.1', 'a documentation or protocol-assignment address'],
  ['198.51.100.7', 'a documentation or protocol-assignment address'],
  ['203.0.113.255', 'a documentation or protocol-assignment address'],
  ['192.0.0.9', 'a documentation or protocol-assignment address'],
  ['2001:db8::1', 'a documentation or protocol-assignment address'],
  ['3fff:fff::1', 'a documentation or protocol-assignment address'],
  // IPv6 forms that carry an IPv4 address a gateway or the host may connect to.
  ['::127.0.0.1', 'an IPv6 address that embeds an IPv4 address'],
  ['::7f00:1', 'an IPv6 address that embeds an IPv4 address'],
  ['::8.8.8.8', 'an IPv6 address that embeds an IPv4 address'],
  ['64:ff9b::7f00:1', 'an IPv6 address that embeds an IPv4 address'],
  ['64:ff9b::10.0.0.1', 'an IPv6 address that embeds an IPv4 address'],
  ['64:ff9b:1::a9fe:a9fe', 'an IPv6 address that embeds an IPv4 address'],
  ['2002:7f00:1::', 'an IPv6 address that embeds an IPv4 address'],
  ['2002:a00:1::1', 'an IPv6 address that embeds an IPv4 address'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'an IPv6 address that embeds an IPv4 address'],
  ['2606:4700::5efe:7f00:1', 'a loopback address inside an IPv6 address'],
  ['2606:4700::200:5efe:10.0.0.1', 'a private address inside an IPv6 address'],
  ['2606:4700::5efe:a9fe:a9fe', 'a cloud metadata address inside an IPv6 address'],
  // IPv4-translated (SIIT), which a translator on the path delivers to the IPv4 address inside, and discard-only.
  ['::ffff:0:127.0.0.1', 'an IPv6 address that embeds an IPv4 address'],
  ['::ffff:0:a9fe:a9fe', 'an IPv6 address that embeds an IPv4 address'],
  ['::ffff:0:808:808', 'an IPv6 address that embeds an IPv4 address'],
  ['100::1', 'a discard-only address'],
  ['100::ffff:ffff:ffff:ffff', 'a discard-only address'],
]

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '172.15.255.255',
  '172.32.0.1',
  '100.63.255.255',
  '100.128.0.1',
  '198.17.255.255',
  '198.20.0.1',
  '192.0.3.1',
  '203.0.114.1',
]
const PUBLIC_V6 = ['2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '2606:4700::5efe:808:808', '2003::1', '64:ff9c::1']

/** The 422 message on field url that `promise` is refused with. */
async function refusal(promise: Promise<unknown>): Promise<string> {
  let message = ''
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof AppError)
    assert.equal(error.statusCode, 422)
    assert.equal(error.details?.length, 1)
    assert.equal(error.details?.[0]?.field, 'url')
    message = error.details?.[0]?.message ?? ''
    return true
  })
  return message
}

const resolvesTo =
  (...addresses: string[]) =>
  async () =>
    addresses

describe('describeForbiddenAddress', () => {
  for (const [address, description] of FORBIDDEN) {
    it(`forbids ${address} as ${description}`, () => {
      assert.equal(describeForbiddenAddress(address), description)
    })
  }

  it('allows public addresses, including the edges of forbidden ranges', () => {
    for (const address of [...PUBLIC, ...PUBLIC_V6]) assert.equal(describeForbiddenAddress(address), undefined, address)
  })

  it('forbids what is not an IP address', () => {
    assert.equal(describeForbiddenAddress('example.com'), 'not an IP address')
    assert.equal(describeForbiddenAddress('999.1.1.1'), 'not an IP address')
  })
})

describe('assertWebhookUrl', () => {
  it('accepts a host that resolves only to public addresses, asking for all of them', async () => {
    const asked: string[] = []
    const lookup = async (host: string) => {
      asked.push(host)
      return ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']
    }
    const url = await assertWebhookUrl('https://hooks.example.com/countersign?x=1', { allowPrivateTargets: false, lookup })
    assert.equal(url.href, 'https://hooks.example.com/countersign?x=1')
    assert.deepEqual(asked, ['hooks.example.com'])
  })

  it('refuses a host resolving to any forbidden address, without saying which address or kind (no map of a private DNS)', async () => {
    // An API key's holder registers names of the service's network (db.internal, vault.internal) to learn what they are.
    for (const [address] of FORBIDDEN) {
      const message = await refusal(assertWebhookUrl('https://db.internal/', { allowPrivateTargets: false, lookup: resolvesTo(address) }))
      assert.equal(
        message,
        `url host db.internal does not resolve to a public address; webhook targets must have a public DNS name or address${PRIVATE_TARGETS_HINT}`,
      )
    }
  })

  it('answers a name that does not resolve, or resolves to none, as one that resolves to a private address: which names exist stays unsaid', async () => {
    const failing = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND db.internal'), { code: 'ENOTFOUND' })
    }
    const answers = await Promise.all(
      [resolvesTo('10.0.0.5'), failing, resolvesTo()].map((lookup) =>
        refusal(assertWebhookUrl('https://db.internal/', { allowPrivateTargets: false, lookup })),
      ),
    )
    assert.deepEqual(
      answers,
      Array(3).fill(
        `url host db.internal does not resolve to a public address; webhook targets must have a public DNS name or address${PRIVATE_TARGETS_HINT}`,
      ),
    )
  })

  it('refuses a host resolving to one public and one private address', async () => {
    const message = await refusal(
      assertWebhookUrl('https://rebind.example.com/', { allowPrivateTargets: false, lookup: resolvesTo('8.8.8.8', '10.0.0.5') }),
    )
    assert.equal(
      message,
      `url host rebind.example.com does not resolve to a public address; webhook targets must have a public DNS name or address${PRIVATE_TARGETS_HINT}`,
    )
  })

  it('names the kind of a forbidden address written in the URL, which the caller gave', async () => {
    // A zone id (fe80::1%eth0) has no place in a URL.
    for (const [address, description] of FORBIDDEN.filter(([address]) => !address.includes('%'))) {
      const host = address.includes(':') ? `[${address}]` : address
      const message = await refusal(assertWebhookUrl(`https://${host}/`, { allowPrivateTargets: false }))
      assert.match(message, new RegExp(`^url is ${description} \\(`), address)
    }
  })

  it('refuses forbidden IP literals, however they are written, without a lookup', async () => {
    const lookup = async () => assert.fail('an IP literal needs no lookup')
    for (const url of [
      'http://127.0.0.1:3000/hook',
      'http://[::1]/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://[::ffff:192.168.0.1]/',
      'http://[fd00:ec2::254]/',
      'http://[::127.0.0.1]:8080/',
      'http://[64:ff9b::7f00:1]/',
      'http://[2002:7f00:1::]/',
    ]) {
      await refusal(assertWebhookUrl(url, { allowPrivateTargets: false, lookup }))
    }
    const url = await assertWebhookUrl('https://8.8.8.8/hook', { allowPrivateTargets: false, lookup })
    assert.equal(url.hostname, '8.8.8.8')
  })

  it('refuses localhost through the system resolver', async () => {
    assert.match(
      await refusal(assertWebhookUrl('http://localhost:8080/', { allowPrivateTargets: false })),
      /^url host localhost does not resolve to a public address/,
    )
  })

  it('lets private targets through when allowPrivateTargets is set', async () => {
    const lookup = resolvesTo('10.0.0.7')
    assert.equal((await assertWebhookUrl('http://127.0.0.1:3000/hook', { allowPrivateTargets: true, lookup })).port, '3000')
    assert.equal(
      (await assertWebhookUrl('http://receiver.internal/hook', { allowPrivateTargets: true, lookup })).hostname,
      'receiver.internal',
    )
  })

  it('still refuses a host that does not resolve when allowPrivateTargets is set', async () => {
    const failing = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' })
    }
    assert.match(
      await refusal(assertWebhookUrl('https://nowhere.invalid/', { allowPrivateTargets: true, lookup: failing })),
      /^url host nowhere.invalid does not resolve to any address/,
    )
    assert.match(
      await refusal(assertWebhookUrl('https://nowhere.invalid/', { allowPrivateTargets: true })),
      /does not resolve to any address/,
    )
    assert.match(
      await refusal(assertWebhookUrl('https://empty.example/', { allowPrivateTargets: true, lookup: resolvesTo() })),
      /does not resolve to any address/,
    )
  })

  it('refuses other schemes and what is not an absolute URL', async () => {
    const options = { allowPrivateTargets: true }
    assert.equal(await refusal(assertWebhookUrl('ftp://example.com/x', options)), 'url must use http or https, not ftp')
    assert.equal(await refusal(assertWebhookUrl('file:///etc/passwd', options)), 'url must use http or https, not file')
    assert.equal(await refusal(assertWebhookUrl('javascript:alert(1)', options)), 'url must use http or https, not javascript')
    for (const garbage of ['', 'not a url', '/relative/path', 'example.com/hook', 'http://']) {
      assert.equal(await refusal(assertWebhookUrl(garbage, options)), 'url must be an absolute http or https URL', garbage)
    }
  })

  it('refuses credentials in the URL', async () => {
    for (const url of ['https://user:pass@example.com/', 'https://user@example.com/', 'https://:pass@example.com/']) {
      assert.match(await refusal(assertWebhookUrl(url, { allowPrivateTargets: true })), /must not contain a user name or password/)
    }
  })

  it('refuses port 0, to which no delivery can ever connect, in any spelling', async () => {
    const lookup = resolvesTo('93.184.216.34')
    for (const url of ['https://example.com:0/hook', 'http://example.com:00/hook', 'http://93.184.216.34:000/']) {
      assert.equal(
        await refusal(assertWebhookUrl(url, { allowPrivateTargets: false, lookup })),
        'url must not use port 0, on which no receiver can listen',
        url,
      )
    }
    assert.equal((await assertWebhookUrl('https://example.com:8443/hook', { allowPrivateTargets: false, lookup })).port, '8443')
  })

  it('refuses URLs longer than 2048 characters', async () => {
    const base = 'https://example.com/'
    const longest = base + 'a'.repeat(2048 - base.length)
    const lookup = resolvesTo('93.184.216.34')
    assert.equal((await assertWebhookUrl(longest, { allowPrivateTargets: false, lookup })).href, longest)
    assert.equal(
      await refusal(assertWebhookUrl(`${longest}a`, { allowPrivateTargets: false, lookup })),
      'url must be at most 2048 characters',
    )
  })
})
