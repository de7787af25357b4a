import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { type Address, createPublicClient, createWalletClient, http, parseAbi, parseAbiItem } from 'viem'
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
const erc1155 = parseAbi([
  'function uri(uint256) view returns (string)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function totalSupply(uint256) view returns (uint256)',
  'function supportsInterface(bytes4) view returns (bool)',
])
const transferSingle = parseAbiItem(
  'event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)',
)
const transferBatch = parseAbiItem(
  'event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)',
)
const uriEvent = parseAbiItem('event URI(string value, uint256 indexed id)')
const ZERO = '0x0000000000000000000000000000000000000000'
/** EIP-1155 "Metadata": what a client puts for `{id}`. */
const expandId = (uri: string, id: bigint) => uri.replaceAll('{id}', id.toString(16).padStart(64, '0'))
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
    expect(devnet.collections.map((c) => [c.name, c.standard])).toEqual([
      ['Onchain Glyphs', 'ERC721'],
      ['Devnet Postcards', 'ERC721'],
      ['Genesis Pioneers', 'ERC721'],
      ['Devnet Editions', 'ERC1155'],
    ])
    for (const collection of devnet.collections.filter((c) => c.standard === 'ERC721')) {
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

  it('deploys the ERC-1155 editions: uri(id) is an {id} template the helper serves, seeded with every event kind', async () => {
    const { public: client } = clientsFor(devnet)
    const editions = devnet.collections.find((c) => c.standard === 'ERC1155')!
    const contract = { address: editions.address, abi: erc1155 } as const
    expect(await client.readContract({ ...contract, functionName: 'name' })).toBe('Devnet Editions')
    expect(await client.readContract({ ...contract, functionName: 'symbol' })).toBe('EDITION')
    expect(
      await client.readContract({ ...contract, functionName: 'supportsInterface', args: ['0xd9b67a26'] }),
    ).toBe(true)
    const template = await client.readContract({ ...contract, functionName: 'uri', args: [1n] })
    expect(template).toBe(`${devnet.metadataOrigin}/editions/{id}.json`)
    for (const id of [1n, 12n]) {
      expect(
        await client.readContract({ ...contract, functionName: 'totalSupply', args: [id] }),
      ).toBeGreaterThan(0n)
      const response = await fetch(expandId(template, id))
      expect(response.status).toBe(200)
      const metadata = (await response.json()) as { name: string; image: string; attributes: unknown[] }
      expect(metadata.name).toBe(`Devnet Edition #${id}`)
      expect(metadata.attributes.length).toBeGreaterThan(0)
      const image = await fetch(metadata.image)
      expect(image.status).toBe(200)
      expect(image.headers.get('content-type')).toMatch(/^image\/(png|svg\+xml)$/)
    }

    const range = { address: editions.address, fromBlock: 0n, toBlock: await client.getBlockNumber() }
    const singles = await client.getLogs({ ...range, event: transferSingle })
    const batches = await client.getLogs({ ...range, event: transferBatch })
    const kinds = (logs: typeof singles | typeof batches) => ({
      mint: logs.some((l) => l.args.from === ZERO),
      transfer: logs.some((l) => l.args.from !== ZERO && l.args.to !== ZERO),
      burn: logs.some((l) => l.args.to === ZERO),
    })
    expect(kinds(singles)).toEqual({ mint: true, transfer: true, burn: true })
    expect(kinds(batches)).toEqual({ mint: true, transfer: true, burn: true })
    expect(
      batches.every((l) => l.args.ids!.length >= 2 && l.args.ids!.length === l.args.values!.length),
    ).toBe(true)
    const wallets = devnet.accounts.map((a) => a.toLowerCase())
    for (const l of [...singles, ...batches].filter((l) => l.args.to !== ZERO))
      expect(wallets).toContain(l.args.to!.toLowerCase())

    // A revised edition has its own URI, announced by a URI event whose value it is.
    const uris = await client.getLogs({ ...range, event: uriEvent })
    expect(uris.length).toBeGreaterThan(0)
    const revised = uris[uris.length - 1]!
    const own = await client.readContract({ ...contract, functionName: 'uri', args: [revised.args.id!] })
    expect(revised.args.value).toBe(own)
    expect(own).toMatch(/\{id\}\.json\?v=\d+$/)
    const document = (await (await fetch(expandId(own, revised.args.id!))).json()) as {
      attributes: unknown[]
    }
    expect(document.attributes).toContainEqual(expect.objectContaining({ trait_type: 'Revision' }))
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
    // The editions' template moved too, and each revised edition announced its new URI.
    const editions = devnet.collections.find((c) => c.standard === 'ERC1155')!
    const template = await again.readContract({
      address: editions.address,
      abi: erc1155,
      functionName: 'uri',
      args: [1n],
    })
    expect(template).toBe(`${devnet.metadataOrigin}/editions/{id}.json`)
    expect((await fetch(expandId(template, 1n))).status).toBe(200)
    const moved = await again.getLogs({
      address: editions.address,
      event: uriEvent,
      fromBlock: head.number + 1n,
      toBlock: await again.getBlockNumber(),
    })
    expect(moved.length).toBeGreaterThan(0)
    expect(moved.every((l) => l.args.value!.startsWith(`${devnet.metadataOrigin}/editions/`))).toBe(true)
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

  it('adds a demo collection that an older deployment lacks, keeping the others', async () => {
    const before = devnet.collections
    await devnet.stop()
    // A chain made before the editions existed: its record names the ERC-721 collections only.
    const recordFile = path.join(dataDir, 'devnet', 'deployment.json')
    const record = JSON.parse(await readFile(recordFile, 'utf8')) as { collections: { key: string }[] }
    record.collections = record.collections.filter((c) => c.key !== 'editions')
    await writeFile(recordFile, JSON.stringify(record))
    devnet = await startDevnet({ dataDir, logger, activity: false })
    expect(devnet.fresh).toBe(false)
    expect(devnet.collections.slice(0, 3)).toEqual(before.slice(0, 3))
    const added = devnet.collections[3]!
    expect(added).toMatchObject({ name: 'Devnet Editions', standard: 'ERC1155' })
    expect(added.address).not.toBe(before[3]!.address)
    const client = clientsFor(devnet).public
    expect(
      await client.readContract({
        address: added.address,
        abi: erc1155,
        functionName: 'totalSupply',
        args: [1n],
      }),
    ).toBeGreaterThan(0n)
  }, 60_000)
})

describe('startDevnet with the activity generator', () => {
  it('keeps minting, transferring and burning, on the ERC-1155 editions in single and batch events too', async () => {
    const devnet = await startDevnet({ dataDir: await newDataDir(), logger, reorgEveryMs: 0 })
    try {
      const { public: client } = clientsFor(devnet)
      const from = (await client.getBlockNumber()) + 1n
      const zero = '0x0000000000000000000000000000000000000000'
      const transferEvent = parseAbi([
        'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
      ])[0]
      const editions = devnet.collections.find((c) => c.standard === 'ERC1155')!.address
      const wallets = devnet.accounts.map((a) => a.toLowerCase())
      const betweenWallets = (l: { args: { from?: Address; to?: Address } }) =>
        wallets.includes(l.args.from!.toLowerCase()) && wallets.includes(l.args.to!.toLowerCase())
      // Actions are random: watch the chain until a mint, a transfer between holders
      // and a burn appeared (a loaded machine slows the generator down, never stops it).
      const seen = async () => {
        const range = { fromBlock: from, toBlock: await client.getBlockNumber() }
        const logs = await client.getLogs({
          address: devnet.collections.map((c) => c.address),
          event: transferEvent,
          ...range,
        })
        const singles = await client.getLogs({ address: editions, event: transferSingle, ...range })
        const batches = await client.getLogs({ address: editions, event: transferBatch, ...range })
        const uris = await client.getLogs({ address: editions, event: uriEvent, ...range })
        const editionLogs = [...singles, ...batches]
        return {
          mint: logs.some((l) => l.args.from === zero),
          transfer: logs.some((l) => l.args.from !== zero && l.args.to !== zero),
          burn: logs.some((l) => l.args.to === zero),
          editionMint: editionLogs.some((l) => l.args.from === zero),
          editionSingleTransfer: singles.some(betweenWallets),
          editionBatchTransfer: batches.some(betweenWallets),
          editionBurn: editionLogs.some((l) => l.args.to === zero),
          editionUri: uris.length > 0,
        }
      }
      await expect.poll(seen, { timeout: 150_000, interval: 2_000 }).toEqual({
        mint: true,
        transfer: true,
        burn: true,
        editionMint: true,
        editionSingleTransfer: true,
        editionBatchTransfer: true,
        editionBurn: true,
        editionUri: true,
      })
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
