/**
 * The embedded devnet used when no RPC_URL is configured: anvil with 1 s blocks whose chain is
 * kept in `<dataDir>/devnet/`, the demo collections deployed once per chain, the metadata
 * helper, and the activity generator.
 *
 * `<dataDir>/devnet/deployment.json` records which chain the contracts belong to (by genesis
 * hash) and where they are, so a restart reuses them instead of deploying again.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import pino from 'pino'
import type { Address, Hex } from 'viem'
import { lockFolder } from '../folder-lock'
import { type Activity, startActivity } from './activity'
import { ANVIL_STOPPED_STATUSES, type AnvilInstance, startAnvil } from './anvil'
import {
  artifactFor,
  compileDemoContracts,
  createDevnetClients,
  DEMO_COLLECTIONS,
  type DeployedCollection,
  type DevnetClients,
  deployCollections,
  metadataBaseUri,
  mineAndWait,
  seedCollections,
  sendCall,
  standardOf,
} from './collections'
import { type MetadataServer, startMetadataServer } from './metadata-server'
import { withMiningPaused } from './mining'
import { type ReorgResult, reorgChain } from './reorg'

export type DevnetOptions = {
  dataDir: string
  /** anvil's RPC port; 0 or undefined: a free one. */
  port?: number
  chainId?: number
  logger?: pino.Logger
  /** Run the activity generator; default true. */
  activity?: boolean
  /** Average time between reorganisations of the activity generator; 0 disables; default 2 min. */
  reorgEveryMs?: number
}

export type Devnet = {
  rpcUrl: string
  metadataOrigin: string
  collections: { address: Hex; name: string; symbol: string; standard: 'ERC721' | 'ERC1155' }[]
  /** The chain was created anew: any data indexed from an earlier devnet chain is void. */
  fresh: boolean
  chainId: number
  /** anvil's funded, unlocked dev accounts; the first owns the collections. */
  accounts: Address[]
  /**
   * Settles when anvil has exited, with the guard's exit status: on stop(), or when anvil was
   * signalled or crashed (the process that started the devnet decides what follows).
   */
  exited: Promise<number | null>
  /** Forces a reorganisation of the last `depth` blocks now. */
  reorg(depth: number): Promise<ReorgResult>
  /** Stops the generator, the metadata helper and anvil (which saves its state). */
  stop(): Promise<void>
}

type DeploymentRecord = {
  version: 1
  chainId: number
  genesisHash: Hex
  metadataOrigin: string
  collections: DeployedCollection[]
}

const BLOCK_TIME_SECONDS = 1
/** anvil rewrites its whole state file each time, and the file grows with the chain (~4 KB per tx). */
const STATE_SAVE_SECONDS = 10
/** In `<dataDir>/devnet/`: the pid of the process whose devnet uses the folder. */
const LOCK_FILE = 'devnet.pid'

export { BLOCK_TIME_SECONDS as DEVNET_BLOCK_TIME_SECONDS }

export async function startDevnet(options: DevnetOptions): Promise<Devnet> {
  const logger = (options.logger ?? pino({ level: 'info' })).child({ module: 'devnet' })
  const chainId = options.chainId ?? 31337
  const dir = path.join(options.dataDir, 'devnet')
  const stateFile = path.join(dir, 'anvil-state.json')
  const recordFile = path.join(dir, 'deployment.json')
  await mkdir(dir, { recursive: true })
  // One devnet per folder: two anvils on one saved chain overwrite each other's (src/dev/folder-lock.ts).
  const releaseDir = lockFolder(dir, LOCK_FILE, 'devnet')
  const startedAt = Date.now()

  // Compiling (cached after the first run) overlaps with anvil's start.
  const artifactsPromise = compileDemoContracts()
  artifactsPromise.catch(() => undefined)
  const record = await readRecord(recordFile)
  const { anvil, loadedState } = await startAnvilKeepingState(stateFile, options, chainId, logger).catch(
    (error: unknown) => {
      releaseDir()
      throw error
    },
  )

  let stopping = false
  anvil.exited.then((code) => {
    if (stopping) return
    // SIGINT/SIGTERM to anvil is someone stopping it, not a failure.
    if (ANVIL_STOPPED_STATUSES.includes(code)) logger.info({ code }, 'devnet anvil stopped by a signal')
    else logger.error({ code }, 'devnet anvil exited unexpectedly; the chain is gone until restart')
  })
  // Run in reverse: the folder is released last, once anvil has saved its chain.
  const cleanups: (() => Promise<void>)[] = [async () => releaseDir(), () => anvil.stop()]
  const stopAll = async () => {
    stopping = true
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined)
  }
  try {
    const clients = createDevnetClients(anvil.rpcUrl, chainId)
    const accounts = await clients.wallet.getAddresses()
    const genesisHash = await genesisOf(clients)
    const sameChain = record?.genesisHash === genesisHash && record.chainId === chainId
    const fresh = !loadedState || (record !== undefined && !sameChain)

    const metadata = await startMetadataServer({ port: sameChain ? portOf(record.metadataOrigin) : 0 })
    cleanups.push(() => metadata.stop())
    const artifacts = await artifactsPromise

    let collections: DeployedCollection[]
    if (sameChain && (await stillDeployed(clients, record.collections))) {
      collections = record.collections
      await keepBaseUriCurrent(clients, artifacts, collections, accounts[0]!, metadata, logger)
      // A demo collection added since this chain was made (e.g. the ERC-1155 editions) joins it.
      const missing = DEMO_COLLECTIONS.filter((d) => !collections.some((c) => c.key === d.key)).map(
        (d) => d.key,
      )
      if (missing.length > 0) {
        const { added, seeded } = await withMiningPaused(clients, BLOCK_TIME_SECONDS, async () => {
          const added = await deployCollections(clients, artifacts, accounts, metadata.origin, missing)
          return { added, seeded: await seedCollections(clients, artifacts, added, accounts) }
        })
        collections = [...collections, ...added]
        logger.info(
          { collections: added.map((c) => c.name), transactions: seeded.sent, refused: seeded.failed },
          'devnet collections added to the existing chain',
        )
      }
    } else {
      const deployed = await withMiningPaused(clients, BLOCK_TIME_SECONDS, async () => {
        const deployed = await deployCollections(clients, artifacts, accounts, metadata.origin)
        return {
          collections: deployed,
          seeded: await seedCollections(clients, artifacts, deployed, accounts),
        }
      })
      collections = deployed.collections
      const seeded = deployed.seeded
      logger.info(
        { transactions: seeded.sent, refused: seeded.failed },
        'devnet collections deployed and seeded',
      )
    }
    await writeRecord(recordFile, {
      version: 1,
      chainId,
      genesisHash,
      metadataOrigin: metadata.origin,
      collections,
    })

    let activity: Activity | undefined
    if (options.activity !== false) {
      activity = startActivity({
        clients,
        artifacts,
        collections,
        accounts,
        logger,
        reorgEveryMs: options.reorgEveryMs,
        blockTimeSeconds: BLOCK_TIME_SECONDS,
      })
      cleanups.push(() => activity!.stop())
    }

    logger.info(
      { rpcUrl: anvil.rpcUrl, metadataOrigin: metadata.origin, fresh, ms: Date.now() - startedAt },
      'devnet ready',
    )
    return {
      rpcUrl: anvil.rpcUrl,
      metadataOrigin: metadata.origin,
      collections: collections.map((c) => ({
        address: c.address,
        name: c.name,
        symbol: c.symbol,
        standard: standardOf(c),
      })),
      fresh,
      chainId,
      accounts,
      exited: anvil.exited,
      reorg: (depth) =>
        activity
          ? activity.reorg(depth)
          : reorgChain(clients, { depth, accounts, blockTimeSeconds: BLOCK_TIME_SECONDS }),
      stop: stopAll,
    }
  } catch (error) {
    await stopAll()
    throw error
  }
}

/** Starts anvil on the saved chain; an unreadable state file is set aside and a new chain begins. */
async function startAnvilKeepingState(
  stateFile: string,
  options: DevnetOptions,
  chainId: number,
  logger: pino.Logger,
): Promise<{ anvil: AnvilInstance; loadedState: boolean }> {
  const anvilOptions = {
    port: options.port,
    chainId,
    blockTime: BLOCK_TIME_SECONDS,
    stateFile,
    stateIntervalSeconds: STATE_SAVE_SECONDS,
  }
  const hasState = existsSync(stateFile) && (await stat(stateFile)).size > 0
  try {
    return { anvil: await startAnvil(anvilOptions), loadedState: hasState }
  } catch (error) {
    if (!hasState) throw error
    const aside = `${stateFile}.unreadable-${Date.now()}`
    logger.warn(
      { err: (error as Error).message, movedTo: aside },
      'devnet state could not be loaded; starting a new chain',
    )
    await rename(stateFile, aside)
    return { anvil: await startAnvil(anvilOptions), loadedState: false }
  }
}

/** The recorded collections are demo ones, each once, and all have code (some may be missing: added later). */
async function stillDeployed(clients: DevnetClients, collections: DeployedCollection[]): Promise<boolean> {
  const keys = collections.map((c) => c.key)
  if (new Set(keys).size !== keys.length || !keys.every((k) => DEMO_COLLECTIONS.some((d) => d.key === k)))
    return false
  const codes = await Promise.all(collections.map((c) => clients.public.getCode({ address: c.address })))
  return codes.every((code) => code !== undefined && code !== '0x')
}

/**
 * Token URIs embed the helper's origin; if its port changed, point the contracts at the new
 * one (the postcards announce it with ERC-4906, the editions with URI events).
 */
async function keepBaseUriCurrent(
  clients: DevnetClients,
  artifacts: Awaited<ReturnType<typeof compileDemoContracts>>,
  collections: DeployedCollection[],
  owner: Address,
  metadata: MetadataServer,
  logger: pino.Logger,
) {
  for (const collection of collections) {
    const expected = metadataBaseUri(collection.key, metadata.origin)
    if (!expected) continue
    const abi = artifactFor(artifacts, collection.contractName).abi
    const current = await clients.public.readContract({
      address: collection.address,
      abi,
      functionName: 'baseURI',
    })
    if (current === expected) continue
    const hash = await sendCall(clients, {
      address: collection.address,
      abi,
      functionName: 'setBaseURI',
      args: [expected],
      from: owner,
    })
    await mineAndWait(clients, [hash])
    logger.info(
      { collection: collection.name, from: current, to: expected },
      'devnet metadata helper moved; base URI updated',
    )
  }
}

function portOf(origin: string): number {
  try {
    return Number(new URL(origin).port) || 0
  } catch {
    return 0
  }
}

async function readRecord(file: string): Promise<DeploymentRecord | undefined> {
  try {
    const record = JSON.parse(await readFile(file, 'utf8')) as DeploymentRecord
    return record.version === 1 && Array.isArray(record.collections) ? record : undefined
  } catch {
    return undefined
  }
}

async function writeRecord(file: string, record: DeploymentRecord) {
  const temporary = `${file}.tmp`
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`)
  await rename(temporary, file)
}

/**
 * The chain's genesis hash as its first block names it. anvil gives block 0 of
 * a chain it reloads from its state file a new time, so a new hash, on some
 * starts; block 1 keeps naming the original as its parent.
 */
async function genesisOf(clients: ReturnType<typeof createDevnetClients>): Promise<Hex> {
  const first = await clients.public.getBlock({ blockNumber: 1n }).catch(() => undefined)
  return first?.parentHash ?? (await clients.public.getBlock({ blockNumber: 0n })).hash
}
