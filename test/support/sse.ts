// Reads a Server-Sent Events response as a client does, one message or comment at a time, over real HTTP.

export type SseItem = { kind: 'data'; data: unknown } | { kind: 'comment'; text: string } | { kind: 'end' }

export interface SseStream {
  response: Response
  /** The next message or comment, or the end of the stream; fails after `timeoutMs`. */
  next(timeoutMs?: number): Promise<SseItem>
  /** The next data message, skipping comments; fails on the end of the stream. */
  nextData(timeoutMs?: number): Promise<unknown>
  close(): void
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController()
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal })
  const reader = response.body?.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  const items: SseItem[] = []

  const readMore = async (): Promise<void> => {
    if (!reader) {
      items.push({ kind: 'end' })
      return
    }
    let chunk: ReadableStreamReadResult<Uint8Array>
    try {
      chunk = await reader.read()
    } catch {
      // Closed by the test, or the connection dropped: either way the stream is over for the reader.
      items.push({ kind: 'end' })
      return
    }
    const { done, value } = chunk
    if (done) {
      items.push({ kind: 'end' })
      return
    }
    buffer += decoder.decode(value, { stream: true })
    let boundary = buffer.indexOf('\n\n')
    while (boundary !== -1) {
      const block = buffer.slice(0, boundary)
      buffer = buffer.slice(boundary + 2)
      const data: string[] = []
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) items.push({ kind: 'comment', text: line.slice(1).trim() })
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
      }
      if (data.length > 0) items.push({ kind: 'data', data: JSON.parse(data.join('\n')) })
      boundary = buffer.indexOf('\n\n')
    }
  }

  const next = async (timeoutMs = 5000): Promise<SseItem> => {
    const deadline = Date.now() + timeoutMs
    while (items.length === 0) {
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no server-sent event within ${timeoutMs} ms`)
      let timer: ReturnType<typeof setTimeout> | undefined
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), left)
      })
      const read = readMore()
      const first = await Promise.race([read.then(() => 'read' as const), timeout])
      clearTimeout(timer)
      if (first === 'timeout') throw new Error(`no server-sent event within ${timeoutMs} ms`)
    }
    return items.shift() as SseItem
  }

  return {
    response,
    next,
    async nextData(timeoutMs = 5000) {
      for (;;) {
        const item = await next(timeoutMs)
        if (item.kind === 'data') return item.data
        if (item.kind === 'end') throw new Error('the stream ended before another data message')
      }
    },
    close: () => abort.abort(),
  }
}
