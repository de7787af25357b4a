/**
 * The demo collections: which Solidity contract each is, how it is deployed, and the initial
 * supply minted on a new chain. All chain access goes through viem; transactions are sent as
 * anvil's unlocked dev accounts (eth_sendTransaction), so the node assigns nonces — that stays
 * right across reorganisations.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type Abi,
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
} from 'viem'
import { mulberry32 } from '@/lib/random'
import { type CompiledContracts, compileContracts } from '../contracts/compile'

export type CollectionKey = 'glyphs' | 'postcards' | 'pioneers' | 'editions'

export type DeployedCollection = {
  key: CollectionKey
  contractName: string
  name: string
  symbol: string
  address: Hex
  deployTxHash: Hex
  deployBlock: string
}

const contractsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'contracts')

/** Deployed in this order; a collection added later is deployed last, so earlier addresses stay. */
export const DEMO_COLLECTIONS: { key: CollectionKey; contractName: string; name: string; symbol: string }[] =
  [
    { key: 'glyphs', contractName: 'OnchainGlyphs', name: 'Onchain Glyphs', symbol: 'GLYPH' },
    { key: 'postcards', contractName: 'DevnetPostcards', name: 'Devnet Postcards', symbol: 'POSTCARD' },
    { key: 'pioneers', contractName: 'GenesisPioneers', name: 'Genesis Pioneers', symbol: 'PIONEER' },
    { key: 'editions', contractName: 'DevnetEditions', name: 'Devnet Editions', symbol: 'EDITION' },
  ]

/** The one ERC-1155 demo collection (DevnetEditions); the others are ERC-721. */
export const isEditions = (c: { key: CollectionKey }) => c.key === 'editions'
export const standardOf = (c: { key: CollectionKey }): 'ERC721' | 'ERC1155' =>
  isEditions(c) ? 'ERC1155' : 'ERC721'

/** DevnetEditions' ids are 1..EDITIONS (the contract's constant). */
export const EDITION_IDS = Array.from({ length: 12 }, (_, i) => BigInt(i + 1))

/**
 * Tokens minted by GenesisPioneers' constructor per recipient (ERC-2309 batches): with the
 * later mints, 68 from the start, so that a gallery page of 50 live tokens is there at once.
 */
const PIONEER_BATCH = 32
const SEND_ATTEMPTS = 3
const INITIAL_MINTS = { glyphs: 36, postcards: 36, pioneers: 4 } satisfies Record<
  Exclude<CollectionKey, 'editions'>,
  number
>

export function compileDemoContracts(): Promise<CompiledContracts> {
  return compileContracts(DEMO_COLLECTIONS.map((c) => path.join(contractsDir, `${c.contractName}.sol`)))
}

export function createDevnetClients(rpcUrl: string, chainId: number) {
  const chain = defineChain({
    id: chainId,
    name: 'devnet',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  })
  // Short polling and no block-number cache: blocks come every second.
  const options = { chain, transport: http(rpcUrl, { retryCount: 1 }), pollingInterval: 100, cacheTime: 0 }
  return {
    chain,
    public: createPublicClient(options),
    wallet: createWalletClient(options),
    test: createTestClient({ ...options, mode: 'anvil' }),
  }
}

export type DevnetClients = ReturnType<typeof createDevnetClients>

export type SendContractCall = {
  address: Address
  abi: Abi
  functionName: string
  args?: readonly unknown[]
  from: Address
}

/** Sends one contract call; rejects when the node refuses it (e.g. it would revert). */
export function sendCall(clients: DevnetClients, call: SendContractCall): Promise<Hex> {
  return clients.wallet.writeContract({
    address: call.address,
    abi: call.abi,
    functionName: call.functionName,
    args: call.args ?? [],
    account: call.from,
    chain: null,
  })
}

/** Where a collection's metadata lives on the devnet's helper (metadata-server.ts); '' for on-chain metadata. */
export function metadataBaseUri(key: CollectionKey, metadataOrigin: string): string {
  if (key === 'postcards') return `${metadataOrigin}/metadata/`
  if (key === 'editions') return `${metadataOrigin}/editions/`
  return ''
}

/** Deploys the demo collections (`only`: those of these keys, e.g. ones added since the chain was made). */
export async function deployCollections(
  clients: DevnetClients,
  artifacts: CompiledContracts,
  accounts: Address[],
  metadataOrigin: string,
  only?: CollectionKey[],
): Promise<DeployedCollection[]> {
  const deployer = accounts[0]!
  const constructorArgs: Record<CollectionKey, unknown[]> = {
    glyphs: [deployer],
    postcards: [deployer, metadataBaseUri('postcards', metadataOrigin)],
    pioneers: [deployer, [accounts[1], accounts[2]], PIONEER_BATCH],
    editions: [deployer, metadataBaseUri('editions', metadataOrigin)],
  }
  const toDeploy = DEMO_COLLECTIONS.filter((c) => !only || only.includes(c.key))
  const hashes: Hex[] = []
  for (const collection of toDeploy) {
    const artifact = artifactFor(artifacts, collection.contractName)
    hashes.push(
      await clients.wallet.deployContract({
        abi: artifact.abi,
        bytecode: artifact.bytecode,
        args: constructorArgs[collection.key],
        account: deployer,
        chain: null,
      }),
    )
  }
  const receipts = await mineAndWait(clients, hashes)
  return toDeploy.map((collection, i) => {
    const receipt = receipts[i]!
    if (receipt.replaced || receipt.status !== 'success' || !receipt.contractAddress) {
      throw new Error(`Deploying ${collection.contractName} failed (tx ${receipt.transactionHash})`)
    }
    return {
      ...collection,
      address: receipt.contractAddress,
      deployTxHash: receipt.transactionHash,
      deployBlock: receipt.blockNumber.toString(),
    }
  })
}

/** Mints the initial supply, then moves, burns and updates a few tokens so every event kind exists. */
export async function seedCollections(
  clients: DevnetClients,
  artifacts: CompiledContracts,
  collections: DeployedCollection[],
  accounts: Address[],
): Promise<{ sent: number; failed: number }> {
  const erc721 = collections.filter((c) => !isEditions(c))
  const editions = collections.find(isEditions)
  const seeded = erc721.length > 0 ? await seedErc721(clients, artifacts, erc721, accounts) : none()
  const more = editions ? await seedEditions(clients, artifacts, editions, accounts) : none()
  return { sent: seeded.sent + more.sent, failed: seeded.failed + more.failed }

  function none() {
    return { sent: 0, failed: 0 }
  }
}

async function seedErc721(
  clients: DevnetClients,
  artifacts: CompiledContracts,
  collections: DeployedCollection[],
  accounts: Address[],
): Promise<{ sent: number; failed: number }> {
  const deployer = accounts[0]!
  // The initial supply is laid out the same way on every new chain.
  const random = mulberry32(31337)
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!
  const byKey = (key: CollectionKey) => collections.find((c) => c.key === key)
  const abiOf = (c: DeployedCollection) => artifactFor(artifacts, c.contractName).abi

  const mints: SendContractCall[] = collections.flatMap((c) =>
    Array.from({ length: INITIAL_MINTS[c.key as keyof typeof INITIAL_MINTS] }, () => ({
      address: c.address,
      abi: abiOf(c),
      functionName: 'mint',
      args: [pick(accounts)],
      from: deployer,
    })),
  )
  const minted = await sendAll(clients, mints)

  const followUps: SendContractCall[] = []
  for (const c of collections) {
    const supply = (await clients.public.readContract({
      address: c.address,
      abi: abiOf(c),
      functionName: 'nextTokenId',
    })) as bigint
    for (let i = 0; i < 7; i++) {
      const tokenId = BigInt(Math.floor(random() * Number(supply)))
      const owner = (await clients.public.readContract({
        address: c.address,
        abi: abiOf(c),
        functionName: 'ownerOf',
        args: [tokenId],
      })) as Address
      if (i < 5) {
        const to = pick(accounts.filter((a) => a.toLowerCase() !== owner.toLowerCase()))
        followUps.push({
          ...target(c),
          functionName: 'transferFrom',
          args: [owner, to, tokenId],
          from: owner,
        })
      } else {
        followUps.push({ ...target(c), functionName: 'burn', args: [tokenId], from: owner })
      }
    }
  }
  const postcards = byKey('postcards')
  const glyphs = byKey('glyphs')
  if (postcards)
    followUps.push({ ...target(postcards), functionName: 'refreshMetadata', args: [1n], from: deployer })
  if (glyphs) followUps.push({ ...target(glyphs), functionName: 'reroll', args: [2n], from: deployer })
  const followed = await sendAll(clients, dedupeTokens(followUps))
  return { sent: minted.sent + followed.sent, failed: minted.failed + followed.failed }

  function target(c: DeployedCollection) {
    return { address: c.address, abi: abiOf(c) }
  }
}

/**
 * The ERC-1155 editions: single mints (TransferSingle) of ids 1..6, batch mints
 * (TransferBatch) of 7..12 to three wallets; then single and batch transfers between
 * wallets, a burn and a batch burn, and a revised edition (a URI event).
 */
async function seedEditions(
  clients: DevnetClients,
  artifacts: CompiledContracts,
  editions: DeployedCollection,
  accounts: Address[],
): Promise<{ sent: number; failed: number }> {
  const deployer = accounts[0]!
  const random = mulberry32(1155)
  const amount = () => BigInt(2 + Math.floor(random() * 9))
  const target = { address: editions.address, abi: artifactFor(artifacts, editions.contractName).abi }
  const singles = EDITION_IDS.slice(0, 6)
  const batched = EDITION_IDS.slice(6)
  const mints: SendContractCall[] = [
    ...singles.map((id, i) => ({
      ...target,
      functionName: 'mint',
      args: [accounts[(i % (accounts.length - 1)) + 1]!, id, amount()],
      from: deployer,
    })),
    ...accounts.slice(1, 4).map((to) => ({
      ...target,
      functionName: 'mintBatch',
      args: [to, batched, batched.map(amount)],
      from: deployer,
    })),
  ]
  const minted = await sendAll(clients, mints)

  // Every mint gave at least 2 of an id, so these moves of 1 each are covered.
  const [, a, b, c, d] = accounts as [Address, Address, Address, Address, Address]
  const holderOf = (id: bigint) => accounts[(Number(id - 1n) % (accounts.length - 1)) + 1]!
  const followUps: SendContractCall[] = [
    {
      ...target,
      functionName: 'safeTransferFrom',
      args: [holderOf(1n), d, 1n, 1n, '0x'],
      from: holderOf(1n),
    },
    {
      ...target,
      functionName: 'safeTransferFrom',
      args: [holderOf(2n), a, 2n, 1n, '0x'],
      from: holderOf(2n),
    },
    {
      ...target,
      functionName: 'safeBatchTransferFrom',
      args: [a, d, batched.slice(0, 3), [1n, 1n, 1n], '0x'],
      from: a,
    },
    {
      ...target,
      functionName: 'safeBatchTransferFrom',
      args: [b, c, batched.slice(3), [1n, 1n, 1n], '0x'],
      from: b,
    },
    { ...target, functionName: 'burn', args: [holderOf(3n), 3n, 1n], from: holderOf(3n) },
    { ...target, functionName: 'burnBatch', args: [c, [7n, 8n], [1n, 1n]], from: c },
    { ...target, functionName: 'refreshMetadata', args: [4n], from: deployer },
  ]
  const followed = await sendAll(clients, followUps)
  return { sent: minted.sent + followed.sent, failed: minted.failed + followed.failed }
}

/** Balances of the editions per account: `balances[account index][id index]` (EDITION_IDS). */
export async function editionBalances(
  clients: DevnetClients,
  editions: { address: Address; abi: Abi },
  accounts: Address[],
): Promise<bigint[][]> {
  const owners = accounts.flatMap((account) => EDITION_IDS.map(() => account))
  const ids = accounts.flatMap(() => EDITION_IDS)
  const flat = (await clients.public.readContract({
    ...editions,
    functionName: 'balanceOfBatch',
    args: [owners, ids],
  })) as bigint[]
  return accounts.map((_, i) => flat.slice(i * EDITION_IDS.length, (i + 1) * EDITION_IDS.length))
}

/** Two calls on the same token in one batch would conflict (e.g. burn after transfer). */
function dedupeTokens(calls: SendContractCall[]): SendContractCall[] {
  const seen = new Set<string>()
  return calls.filter((call) => {
    const tokenId = call.functionName === 'transferFrom' ? call.args?.[2] : call.args?.[0]
    const key = `${call.address}:${String(tokenId)}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

async function sendAll(clients: DevnetClients, calls: SendContractCall[]) {
  const hashes: Hex[] = []
  let failed = 0
  // One at a time: the node hands out nonces per sender in order. A send that fails (on a
  // loaded machine an RPC call can time out) is tried again, so a new devnet has its whole supply.
  for (const call of calls) {
    const hash = await sendWithRetries(clients, call)
    if (hash) hashes.push(hash)
    else failed++
  }
  const receipts = await mineAndWait(clients, hashes)
  failed += receipts.filter((r) => r.replaced || r.status !== 'success').length
  return { sent: calls.length, failed }
}

async function sendWithRetries(clients: DevnetClients, call: SendContractCall): Promise<Hex | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sendCall(clients, call)
    } catch {
      if (attempt === SEND_ATTEMPTS) return undefined
      await new Promise((r) => setTimeout(r, 250 * attempt))
    }
  }
}

/**
 * Mines at once instead of waiting for the next interval block, until the pool is empty (one
 * block may not hold them all), then collects receipts. A transaction another one with its
 * nonce replaced is `replaced`: viem would hand back the other's receipt.
 */
export async function mineAndWait(clients: DevnetClients, hashes: Hex[]) {
  if (hashes.length === 0) return []
  for (let blocks = 0; blocks < 100; blocks++) {
    await clients.test.mine({ blocks: 1 })
    if ((await clients.test.getTxpoolStatus()).pending === 0) break
  }
  return Promise.all(
    hashes.map(async (hash) => {
      let replaced = false
      const receipt = await clients.public.waitForTransactionReceipt({
        hash,
        timeout: 30_000,
        onReplaced: () => {
          replaced = true
        },
      })
      return { ...receipt, replaced }
    }),
  )
}

export function artifactFor(artifacts: CompiledContracts, contractName: string) {
  const artifact = artifacts[contractName]
  if (!artifact) throw new Error(`Contract ${contractName} missing from the compiled demo contracts`)
  return artifact
}
