/**
 * The metadata host simulator of `npm run bench:metadata`: many HTTP hosts on
 * distinct loopback addresses (127.0.1.x and up), each of one kind:
 *   fast  — a realistic JSON document at once (keep-alive): benchDocument;
 *   slow  — headers, then one byte every few seconds, never finished;
 *   dead  — a socket that never accepts (python3, listen backlog 0): connects time out;
 *   limit — 429 with Retry-After for its first 30 s, then fast.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export type HostKind = 'fast' | 'slow' | 'dead' | 'limit'

export interface SimHost {
  kind: HostKind
  origin: string
  /** host:port, for FETCH_ALLOW_HOSTS. */
  key: string
}

export interface HostSimulator {
  hosts: SimHost[]
  /** Requests per kind of host; `limit429`: the 429 answers among the limit hosts' requests. */
  requests(): Record<HostKind | 'limit429', number>
  close(): Promise<void>
}

/**
 * A document as collections serve them (about 1.2 kB): name, description,
 * image, animation_url, external_url, background_color and 8 attributes,
 * one of them numeric with a display_type. The indexer keeps it whole
 * (token_documents) and normalizes its fields onto the token.
 */
export function benchDocument(host: number, id: string): string {
  const n = Number(id) || 0
  const pick = (values: readonly string[], salt: number) =>
    values[(n * 31 + salt * 17 + host) % values.length]!
  return JSON.stringify({
    name: `Token ${id}`,
    description: `Token ${id} of host ${host}: one of a collection of generated characters, each drawn from eight traits of varying rarity. Holders get access to the community and its events. This text is as long as a typical description.`,
    image: `ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/${id}.png`,
    animation_url: `ipfs://bafybeibnsoufr2renqzsh347nrx54wcubt5lgkeivez63xvivplfwhtpym/${id}.mp4`,
    external_url: `https://example.com/host-${host}/${id}`,
    background_color: pick(['1f2a44', 'ffffff', 'a0c4ff', 'ffd6a5'], 0),
    attributes: [
      { trait_type: 'Background', value: pick(['Blue', 'Red', 'Green', 'Yellow', 'Purple'], 1) },
      { trait_type: 'Body', value: pick(['Plain', 'Striped', 'Spotted', 'Robot', 'Zombie'], 2) },
      { trait_type: 'Eyes', value: pick(['Wide', 'Sleepy', 'Laser', 'Closed', 'Wink', 'Glow'], 3) },
      { trait_type: 'Mouth', value: pick(['Smile', 'Frown', 'Grin', 'Open'], 4) },
      { trait_type: 'Hat', value: pick(['Cap', 'Crown', 'Beanie', 'Halo', 'None'], 5) },
      { trait_type: 'Clothes', value: pick(['Hoodie', 'Suit', 'Tee', 'Armor'], 6) },
      { trait_type: 'Accessory', value: pick(['Chain', 'Earring', 'Glasses', 'Pipe'], 7) },
      { trait_type: 'Level', value: 1 + (n % 10), display_type: 'number' },
    ],
  })
}

/** The i-th loopback address of the simulator (127.0.1.1, 127.0.1.2, …, 127.0.2.0, …). */
const loopback = (i: number) => `127.0.${1 + Math.floor((i + 1) / 256)}.${(i + 1) % 256}`

export async function startHostSimulator(
  kinds: HostKind[],
  options: { slowByteMs?: number; limitForMs?: number } = {},
): Promise<HostSimulator> {
  const counts: Record<HostKind | 'limit429', number> = { fast: 0, slow: 0, dead: 0, limit: 0, limit429: 0 }
  const servers: http.Server[] = []
  const sockets = new Set<import('node:net').Socket>()
  const hosts: SimHost[] = []
  const deadAddresses: Array<{ host: string; index: number }> = []
  for (const [i, kind] of kinds.entries()) {
    const host = loopback(i)
    if (kind === 'dead') {
      deadAddresses.push({ host, index: i })
      continue
    }
    let firstHit = 0
    const server = http.createServer((req, res) => {
      counts[kind]++
      const id = (req.url ?? '').split('/').pop()
      const ok = () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(benchDocument(i, id ?? '0'))
      if (kind === 'fast') return ok()
      if (kind === 'limit') {
        firstHit ||= Date.now()
        if (Date.now() - firstHit < (options.limitForMs ?? 30_000)) {
          counts.limit429++
          return res.writeHead(429, { 'retry-after': '10' }).end()
        }
        return ok()
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{')
      const timer = setInterval(() => res.write(' '), options.slowByteMs ?? 3_000)
      res.on('close', () => clearInterval(timer))
    })
    server.keepAliveTimeout = 30_000
    server.on('connection', (s) => {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
    })
    await new Promise<void>((resolve) => server.listen(0, host, resolve))
    servers.push(server)
    const port = (server.address() as AddressInfo).port
    hosts[i] = { kind, origin: `http://${host}:${port}`, key: `${host}:${port}` }
  }
  let python: ChildProcess | undefined
  if (deadAddresses.length > 0) {
    // Sockets that listen but never accept: after the backlog fills, SYNs go unanswered.
    python = spawn(
      'python3',
      [
        '-c',
        `import socket, sys, time
socks = []
for host in sys.argv[1:]:
    s = socket.socket()
    s.bind((host, 0))
    s.listen(0)
    socks.append(s)
    print(host + ':' + str(s.getsockname()[1]), flush=True)
time.sleep(10**9)`,
        ...deadAddresses.map((d) => d.host),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    const lines: string[] = []
    await new Promise<void>((resolve, reject) => {
      python!.on('error', reject)
      python!.stdout!.on('data', (chunk: Buffer) => {
        lines.push(...chunk.toString().split('\n').filter(Boolean))
        if (lines.length >= deadAddresses.length) resolve()
      })
    })
    for (const [n, d] of deadAddresses.entries())
      hosts[d.index] = { kind: 'dead', origin: `http://${lines[n]}`, key: lines[n]! }
  }
  return {
    hosts,
    requests: () => ({ ...counts }),
    async close() {
      python?.kill()
      for (const s of sockets) s.destroy()
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
    },
  }
}
