import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { type Address, createPublicClient, createWalletClient, http, parseAbi } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from './index'

const erc721 = parseAbi([
  'function ownerOf(uint256) view returns (address)',
  'function tokenURI(uint256) view returns (string)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function nextTokenId() view returns (uint256)',
  'function contractURI() view returns (string)',
  'function transferFrom(address from, address to, uint256 tokenId)',
])
const logger = pino({ level: 'warn' })
const dataDirs: string[] = []

async function newDataDir() {
  const dir = await mkdtemp(path.join(tmpdir(), 'devnet-test-'))
  dataDirs.push(dir)
  return dir
}

afterAll(async () => {
  await Promise.all(dataDirs.map((dir) => rm(dir, { recursive: true, force: true })))
})

function clientsFor(devnet: Devnet) {
  const transport = http(devnet.rpcUrl)
  return {
    public: createPublicClient({ transport, pollingInterval: 100, cacheTime: 0 }),
    wallet: createWalletClient({ transport }),
  }
}

function decodeDataUri(uri: string): string {
  const comma = uri.indexOf(',')
  const header = uri.slice(0, comma)
  const body = uri.slice(comma + 1)
  return header.endsWith(';base64') ? Buffer.from(body, 'base64').toString('utf8') : body
}

describe('startDevnet', () => {
  let devnet: Devnet
  let dataDir: string

  beforeAll(async () => {
    dataDir = await newDataDir()
    devnet = await startDevnet({ dataDir, logger, activity: false })
  }, 60_000)

  afterAll(async () => {
    await devnet?.stop()
  })

  it('deploys named collections whose tokens exist on chain', async () => {
    const { public: client } = clientsFor(devnet)
    expect(devnet.fresh).toBe(true)
    expect(devnet.collections.map((c) => c.name)).toEqual([
      'Onchain Glyphs',
      'Devnet Postcards',
      'Genesis Pioneers',
    ])
    for (const collection of devnet.collections) {
      const contract = { address: collection.address, abi: erc721 } as const
      expect(await client.readContract({ ...contract, functionName: 'name' })).toBe(collection.name)
      expect(await client.readContract({ ...contract, functionName: 'symbol' })).toBe(collection.symbol)
      expect(await client.readContract({ ...contract, functionName: 'nextTokenId' })).toBeGreaterThanOrEqual(
        24n,
      )
      const tokenId = await firstLiveToken(client, collection.address)
      const owner = await client.readContract({ ...contract, functionName: 'ownerOf', args: [tokenId] })
      expect(devnet.accounts.map((a) => a.toLowerCase())).toContain(owner.toLowerCase())
      const uri = await client.readContract({ ...contract, functionName: 'tokenURI', args: [tokenId] })
      const metadata = JSON.parse(
        uri.startsWith('data:') ? decodeDataUri(uri) : await (await fetch(uri)).text(),
      ) as { name: string; image: string }
      expect(metadata.name).toMatch(new RegExp(`${tokenId}$`))
      expect(metadata.image).toMatch(/^(data:image\/svg\+xml|http:\/\/127\.0\.0\.1)/)
    }
  })

  it('serves HTTP metadata whose image resolves, and collection metadata with an image', async () => {
    const { public: client } = clientsFor(devnet)
    const postcards = devnet.collections.find((c) => c.name === 'Devnet Postcards')!
    const tokenId = await firstLiveToken(client, postcards.address)
    const uri = await client.readContract({
      address: postcards.address,
      abi: erc721,
      functionName: 'tokenURI',
      args: [tokenId],
    })
    expect(uri).toBe(`${devnet.metadataOrigin}/metadata/${tokenId}.json`)
    const response = await fetch(uri)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    const metadata = (await response.json()) as { image: string }
    const image = await fetch(metadata.image)
    expect(image.status).toBe(200)
    expect(image.headers.get('content-type')).toMatch(/^image\/(png|svg\+xml)$/)
    expect((await image.arrayBuffer()).byteLength).toBeGreaterThan(100)

    const glyphs = devnet.collections.find((c) => c.name === 'Onchain Glyphs')!
    const contractUri = await client.readContract({
      address: glyphs.address,
      abi: erc721,
      functionName: 'contractURI',
    })
    const collection = JSON.parse(decodeDataUri(contractUri)) as { name: string; image: string }
    expect(collection.name).toBe('Onchain Glyphs')
    expect(decodeDataUri(collection.image)).toMatch(/^<svg /)
  })

  it('mines a block every second', async () => {
    const { public: client } = clientsFor(devnet)
    const start = await client.getBlockNumber()
    await new Promise((resolve) => setTimeout(resolve, 2_300))
    expect(await client.getBlockNumber()).toBeGreaterThanOrEqual(start + 2n)
  })

  it('reorganises the chain: new block hashes, and the dropped transfer is gone', async () => {
    const { public: client, wallet } = clientsFor(devnet)
    const glyphs = devnet.collections.find((c) => c.name === 'Onchain Glyphs')!
    const tokenId = await firstLiveToken(client, glyphs.address)
    const owner = await client.readContract({
      address: glyphs.address,
      abi: erc721,
      functionName: 'ownerOf',
      args: [tokenId],
    })
    const recipient = devnet.accounts.find((a) => a.toLowerCase() !== owner.toLowerCase())!
    const hash = await wallet.writeContract({
      address: glyphs.address,
      abi: erc721,
      functionName: 'transferFrom',
      args: [owner, recipient, tokenId],
      account: owner,
      chain: null,
    })
    const receipt = await client.waitForTransactionReceipt({ hash })
    // One block of margin: the next interval block may arrive before the reorg pauses mining.
    const depth = Number((await client.getBlockNumber()) - receipt.blockNumber) + 2

    const result = await devnet.reorg(depth)
    const reorged = result.replaced.find((r) => r.number === receipt.blockNumber)!
    expect(reorged.oldHash).toBe(receipt.blockHash)
    expect(reorged.newHash).not.toBe(reorged.oldHash)
    expect((await client.getBlock({ blockNumber: receipt.blockNumber })).hash).toBe(reorged.newHash)
    await expect(client.getTransactionReceipt({ hash })).rejects.toThrow()
    const ownerAfter = await client.readContract({
      address: glyphs.address,
      abi: erc721,
      functionName: 'ownerOf',
      args: [tokenId],
    })
    expect(ownerAfter).toBe(owner)
    // Mining carries on after the reorganisation.
    const head = await client.getBlockNumber()
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(await client.getBlockNumber()).toBeGreaterThan(head)
  }, 30_000)

  it('reuses the deployment on restart and follows the metadata helper to a new port', async () => {
    const { public: client } = clientsFor(devnet)
    const head = await client.getBlock()
    const before = devnet.collections
    const oldOrigin = devnet.metadataOrigin
    await devnet.stop()

    // Occupy the helper's old port so it has to move.
    const blocker = createServer()
    await new Promise<void>((resolve) =>
      blocker.listen(Number(new URL(oldOrigin).port), '127.0.0.1', resolve),
    )
    try {
      devnet = await startDevnet({ dataDir, logger, activity: false })
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
    const again = clientsFor(devnet).public
    expect(devnet.fresh).toBe(false)
    expect(devnet.collections).toEqual(before)
    expect((await again.getBlock({ blockNumber: head.number })).hash).toBe(head.hash)
    expect(devnet.metadataOrigin).not.toBe(oldOrigin)
    const postcards = devnet.collections.find((c) => c.name === 'Devnet Postcards')!
    const tokenId = await firstLiveToken(again, postcards.address)
    const uri = await again.readContract({
      address: postcards.address,
      abi: erc721,
      functionName: 'tokenURI',
      args: [tokenId],
    })
    expect(uri.startsWith(`${devnet.metadataOrigin}/metadata/`)).toBe(true)
    expect((await fetch(uri)).status).toBe(200)
  }, 60_000)

  it('knows its own chain over restarts, though anvil renews block 0 of a reloaded chain', async () => {
    const before = devnet.collections
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2_000))
      await devnet.stop()
      devnet = await startDevnet({ dataDir, logger, activity: false })
      expect(devnet.fresh).toBe(false)
      expect(devnet.collections).toEqual(before)
    }
  }, 60_000)
})

describe('startDevnet with the activity generator', () => {
  it('keeps minting, transferring and burning', async () => {
    const devnet = await startDevnet({ dataDir: await newDataDir(), logger, reorgEveryMs: 0 })
    try {
      const { public: client } = clientsFor(devnet)
      const from = (await client.getBlockNumber()) + 1n
      const zero = '0x0000000000000000000000000000000000000000'
      const transferEvent = parseAbi([
        'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
      ])[0]
      // Actions are random: watch the chain until a mint, a transfer between holders
      // and a burn appeared (a loaded machine slows the generator down, never stops it).
      const seen = async () => {
        const logs = await client.getLogs({
          address: devnet.collections.map((c) => c.address),
          event: transferEvent,
          fromBlock: from,
          toBlock: await client.getBlockNumber(),
        })
        return {
          mint: logs.some((l) => l.args.from === zero),
          transfer: logs.some((l) => l.args.from !== zero && l.args.to !== zero),
          burn: logs.some((l) => l.args.to === zero),
        }
      }
      await expect
        .poll(seen, { timeout: 150_000, interval: 2_000 })
        .toEqual({ mint: true, transfer: true, burn: true })
    } finally {
      await devnet.stop()
    }
  }, 180_000)
})

async function firstLiveToken(
  client: ReturnType<typeof clientsFor>['public'],
  address: Address,
): Promise<bigint> {
  for (let tokenId = 1n; tokenId < 20n; tokenId++) {
    const owner = await client
      .readContract({ address, abi: erc721, functionName: 'ownerOf', args: [tokenId] })
      .catch(() => undefined)
    if (owner) return tokenId
  }
  throw new Error(`no live token below 20 in ${address}`)
}
