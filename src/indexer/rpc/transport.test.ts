/**
 * The wire to one endpoint, against real local HTTP servers: answer bodies
 * bounded as they arrive, ASCII and UTF-8 answers decoded alike, and the two
 * reads of a verified range parsed once when their answers are the same bytes.
 */
import type http from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { startJsonRpcServer, type TestServer } from '../test/http-server'
import { HttpJsonRpc, MAX_BODY_BYTES, RpcRequestError, TwinReads } from './transport'

const servers: TestServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

async function server(handle: (body: { id: number }, res: http.ServerResponse) => void) {
  const s = await startJsonRpcServer(handle)
  servers.push(s)
  return s.origin
}

const wire = (url: string, maxBodyBytes = MAX_BODY_BYTES) =>
  new HttpJsonRpc({ url, batchSize: 100, timeoutMs: 5_000, maxBodyBytes }, (exchange) => exchange())

const logs = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ logIndex: `0x${i.toString(16)}`, data: '0x' }))

describe('HttpJsonRpc', () => {
  it('refuses an answer larger than the limit as it streams in, without a Content-Length', async () => {
    let sent = 0
    const url = await server((_body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }) // chunked: no length announced
      const chunk = Buffer.alloc(64 * 1024, 0x20)
      const pump = () => {
        // Never ends on its own: only the client's refusal stops it.
        while (sent < 64 * 1024 * 1024 && res.write(chunk)) sent += chunk.length
        if (sent < 64 * 1024 * 1024) res.once('drain', pump)
        else res.end()
      }
      pump()
    })
    const err = await wire(url, 1024 * 1024)
      .call('eth_getLogs', [{}])
      .catch((e) => e)
    expect(err).toBeInstanceOf(RpcRequestError)
    expect((err as RpcRequestError).kind).toBe('too_large')
    expect((err as Error).message).toMatch(/larger than 1048576/)
    expect(sent).toBeLessThan(64 * 1024 * 1024)
  })

  it('decodes UTF-8 answers as UTF-8 and ASCII answers alike', async () => {
    const url = await server((body, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: body.id,
          error: { code: -32000, message: 'nœud indisponible ✗' },
        }),
      ),
    )
    const err = await wire(url)
      .call('eth_blockNumber', [])
      .catch((e) => e)
    expect((err as Error).message).toContain('nœud indisponible ✗')
    const ascii = await server((body, res) =>
      res.writeHead(200).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: logs(3) })),
    )
    expect(await wire(ascii).call('eth_getLogs', [{}])).toEqual(logs(3))
  })

  it('parses twin answers once when they are the same bytes, and each on its own when they differ', async () => {
    const ids: number[] = []
    let omit = false
    let alter = false
    const url = await server((body, res) => {
      ids.push(body.id)
      const result = logs(1_000)
      if (omit) result.splice(500, 1)
      // The same length, one byte apart.
      if (alter) result[999]!.logIndex = '0x3e6'
      res.writeHead(200).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }))
    })
    const rpc = wire(url)

    const twin = new TwinReads()
    const [a, b] = await Promise.all([
      rpc.call('eth_getLogs', [{ fromBlock: '0x1' }], { twin }),
      rpc.call('eth_getLogs', [{ fromBlock: '0x1' }], { twin }),
    ])
    // Both reads reached the provider, under one id; the second answer is the first's parse.
    expect(ids).toEqual([twin.id, twin.id])
    expect(b).toBe(a)
    expect(a).toHaveLength(1_000)

    const other = new TwinReads()
    const first = await rpc.call('eth_getLogs', [{ fromBlock: '0x1' }], { twin: other })
    omit = true
    const second = await rpc.call('eth_getLogs', [{ fromBlock: '0x1' }], { twin: other })
    expect(second).not.toBe(first)
    expect(first).toHaveLength(1_000)
    expect(second).toHaveLength(999)

    const near = new TwinReads()
    omit = false
    const original = (await rpc.call('eth_getLogs', [{ fromBlock: '0x1' }], { twin: near })) as unknown[]
    alter = true
    const altered = (await rpc.call('eth_getLogs', [{ fromBlock: '0x1' }], { twin: near })) as unknown[]
    alter = false
    expect(altered).not.toBe(original)
    expect(altered[999]).toEqual({ logIndex: '0x3e6', data: '0x' })
    expect(original[999]).toEqual({ logIndex: '0x3e7', data: '0x' })

    // Different requests never share an answer, even under one twin.
    const third = new TwinReads()
    omit = false
    const [x, y] = await Promise.all([
      rpc.call('eth_getLogs', [{ fromBlock: '0x1' }], { twin: third }),
      rpc.call('eth_getLogs', [{ fromBlock: '0x2' }], { twin: third }),
    ])
    expect(y).not.toBe(x)
  })
})
