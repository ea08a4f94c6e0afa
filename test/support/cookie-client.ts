// A cookie client standing in for a browser in sign-in tests (the real browser is chromium.ts): real HTTP with fetch,
// a cookie jar per host, and redirects followed one hop at a time so that a test can stop at (and tamper with) any.
// Requests to PUBLIC_URL's origin go to where the test service really listens.

export interface BrowserResponse {
  status: number
  /** The Location header, resolved against the request URL. */
  location: URL | undefined
  setCookies: string[]
  body: string
}

export class TestBrowser {
  private readonly jar = new Map<string, Map<string, string>>()

  constructor(private readonly origins: Record<string, string> = {}) {}

  async request(
    url: URL,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<BrowserResponse> {
    const target = new URL(url)
    const realOrigin = this.origins[target.origin]
    const sent = realOrigin ? new URL(target.pathname + target.search, realOrigin) : target
    const headers: Record<string, string> = { ...init.headers }
    const cookies = this.cookieHeader(target)
    if (cookies) headers.cookie = cookies
    if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded'
    const response = await fetch(sent, {
      method: init.method ?? 'GET',
      headers,
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
      redirect: 'manual',
    })
    const setCookies = response.headers.getSetCookie()
    for (const header of setCookies) this.store(target, header)
    const location = response.headers.get('location')
    return { status: response.status, location: location ? new URL(location, target) : undefined, setCookies, body: await response.text() }
  }

  cookie(url: URL, name: string): string | undefined {
    return this.jar.get(url.host)?.get(name)
  }

  setCookie(url: URL, name: string, value: string): void {
    this.cookiesOf(url).set(name, value)
  }

  /**
   * Signs in at the provider the way a person would: follows redirects from `start`, fills in the provider's
   * login form as `login` and its consent form, and stops (without following) at the first URL `isCallback` accepts.
   */
  async signInAtProvider(start: URL, login: string, isCallback: (url: URL) => boolean): Promise<URL> {
    let url = start
    let form: Record<string, string> | undefined
    for (let hop = 0; hop < 20; hop++) {
      if (isCallback(url)) return url
      const response = await this.request(url, form ? { method: 'POST', form } : {})
      form = undefined
      if (response.status >= 300 && response.status < 400 && response.location) {
        url = response.location
        continue
      }
      const action = /<form[^>]*action="([^"]+)"/.exec(response.body)?.[1]
      const prompt = /name="prompt" value="(\w+)"/.exec(response.body)?.[1]
      if (response.status !== 200 || !action || !prompt)
        throw new Error(`Unexpected ${response.status} at ${url}: ${response.body.slice(0, 300)}`)
      url = new URL(action, url)
      form = prompt === 'login' ? { prompt, login, password: 'any password' } : { prompt }
    }
    throw new Error('Too many redirects while signing in at the provider')
  }

  private cookiesOf(url: URL): Map<string, string> {
    let cookies = this.jar.get(url.host)
    if (!cookies) {
      cookies = new Map()
      this.jar.set(url.host, cookies)
    }
    return cookies
  }

  private cookieHeader(url: URL): string {
    return [...(this.jar.get(url.host) ?? [])].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  private store(url: URL, header: string): void {
    const [pair = '', ...attributes] = header.split(';')
    const separator = pair.indexOf('=')
    const name = pair.slice(0, separator).trim()
    const value = pair.slice(separator + 1).trim()
    const expired =
      attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) ||
      attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now())
    if (expired) this.cookiesOf(url).delete(name)
    else this.cookiesOf(url).set(name, value)
  }
}
