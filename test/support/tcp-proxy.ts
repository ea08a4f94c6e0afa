// A TCP proxy in front of a real server (PostgreSQL, Redis) that a test can cut and restore, to show how the
// service behaves while a dependency is away.
import { connect, createServer, type Server, type Socket } from 'node:net'

export interface TcpProxy {
  port: number
  /** Drops every open connection and refuses new ones until restore(). */
  cut(): void
  restore(): void
  /** While muted, connections stay open and requests reach the server, but its answers are dropped (a stalled server). */
  mute(muted: boolean): void
  close(): Promise<void>
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  let open = true
  let muted = false
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy()
      return
    }
    const upstream = connect(targetPort, targetHost)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream)
    upstream.on('data', (chunk: Buffer) => {
      if (!muted) client.write(chunk)
    })
    // The server's end of the connection reaches the client, as a pipe would pass it (a QUIT is answered by a close).
    upstream.on('end', () => client.end())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address !== 'object') throw new Error('proxy did not bind')
  return {
    port: address.port,
    cut() {
      open = false
      for (const socket of sockets) socket.destroy()
    },
    restore() {
      open = true
    },
    mute(value) {
      muted = value
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

export interface ProxiedUrl extends TcpProxy {
  /** The URL given, pointing at the proxy instead of the server. */
  url: string
}

/** Starts a proxy in front of the server of `url` (at `defaultPort` when the URL names none) and rewrites the URL to it. */
export async function proxied(url: string, defaultPort: number): Promise<ProxiedUrl> {
  const target = new URL(url)
  const proxy = await startTcpProxy(target.hostname, Number(target.port || defaultPort))
  target.host = `127.0.0.1:${proxy.port}`
  return { ...proxy, url: target.href }
}
