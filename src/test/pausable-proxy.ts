/**
 * A TCP proxy a test can freeze: while frozen it accepts connections and
 * reads what either side sends but forwards nothing, as a SIGSTOPped server
 * looks from the client — without stopping a server other tests share.
 * Thawing forwards what was held back and carries on.
 */
import net from 'node:net'

export interface PausableProxy {
  port: number
  freeze(): void
  thaw(): void
  close(): Promise<void>
}

export async function startPausableProxy(target: { host: string; port: number }): Promise<PausableProxy> {
  let frozen = false
  const held: (() => void)[] = []
  const sockets = new Set<net.Socket>()
  const forward = (from: net.Socket, to: net.Socket) => {
    from.on('data', (chunk) => {
      if (frozen) held.push(() => to.write(chunk))
      else to.write(chunk)
    })
    from.on('close', () => to.destroy())
    from.on('error', () => to.destroy())
  }
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
    }
    forward(client, upstream)
    forward(upstream, client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze() {
      frozen = true
    },
    thaw() {
      frozen = false
      for (const send of held.splice(0)) send()
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
