/**
 * Keeps the devnet alive: every 1–2 s a few mints, transfers between the funded dev accounts,
 * burns and now and then an ERC-4906 metadata update; about every `reorgEveryMs` a chain
 * reorganisation of depth 1..3. A failed transaction is logged at debug level and skipped —
 * the generator never stops because of one.
 */
import pino from 'pino'
import type { Address } from 'viem'
import type { CompiledContracts } from '../contracts/compile'
import {
  artifactFor,
  type DeployedCollection,
  type DevnetClients,
  type SendContractCall,
  sendCall,
} from './collections'
import { type ReorgResult, reorgChain } from './reorg'

export type ActivityOptions = {
  clients: DevnetClients
  artifacts: CompiledContracts
  collections: DeployedCollection[]
  /** anvil's unlocked accounts; the first is the collections' owner. */
  accounts: Address[]
  logger?: pino.Logger
  /** Average time between reorganisations; 0 disables them. Default 2 minutes. */
  reorgEveryMs?: number
  /** The chain's interval-mining period, restored after a reorg; undefined: automine. */
  blockTimeSeconds?: number
  /** Pause between rounds of transactions; default 1000–2000 ms. */
  tickMs?: { min: number; max: number }
}

export type Activity = {
  /** Forces a reorganisation now (between two rounds of transactions). */
  reorg(depth: number): Promise<ReorgResult>
  stop(): Promise<void>
}

/** Above this many minted tokens a collection only sees transfers and updates, so the chain stays small. */
const MAX_MINTED_PER_COLLECTION = 2_000n

type Action = 'mint' | 'transfer' | 'burn' | 'update'
const ACTION_WEIGHTS: [Action, number][] = [
  ['mint', 30],
  ['transfer', 50],
  ['burn', 8],
  ['update', 12],
]
/** At least one action in this many is a burn, so a short look at the devnet sees every kind of event. */
const BURN_AT_LEAST_EVERY = 10

export function startActivity(options: ActivityOptions): Activity {
  const logger = options.logger ?? pino({ level: 'info' })
  const { clients, accounts } = options
  const deployer = accounts[0]!
  const reorgEveryMs = options.reorgEveryMs ?? 120_000
  const tick = options.tickMs ?? { min: 1_000, max: 2_000 }
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let nextReorgAt = Date.now() + jitter(reorgEveryMs)
  // Rounds and reorgs never overlap: a reorg pauses mining and rewrites the head.
  let queue: Promise<unknown> = Promise.resolve()
  const exclusive = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task, task)
    queue = run.catch(() => undefined)
    return run
  }

  const abiOf = (c: DeployedCollection) => artifactFor(options.artifacts, c.contractName).abi
  const randomItem = <T>(items: T[]) => items[Math.floor(Math.random() * items.length)]!

  async function ownerOf(c: DeployedCollection, tokenId: bigint): Promise<Address | undefined> {
    return clients.public
      .readContract({ address: c.address, abi: abiOf(c), functionName: 'ownerOf', args: [tokenId] })
      .then((owner) => owner as Address)
      .catch(() => undefined) // burned or never minted
  }

  /** Builds one random transaction, or undefined when the dice land on an impossible one. */
  async function randomCall(forcedAction?: Action): Promise<SendContractCall | undefined> {
    const c = randomItem(options.collections)
    const target = { address: c.address, abi: abiOf(c) }
    const minted = (await clients.public.readContract({ ...target, functionName: 'nextTokenId' })) as bigint
    const action = forcedAction ?? weightedAction()
    if (action === 'mint' || minted === 0n) {
      if (minted >= MAX_MINTED_PER_COLLECTION) return undefined
      return { ...target, functionName: 'mint', args: [randomItem(accounts)], from: deployer }
    }
    const tokenId = BigInt(Math.floor(Math.random() * Number(minted)))
    const owner = await ownerOf(c, tokenId)
    if (!owner) return undefined
    if (action === 'transfer') {
      const to = randomItem(accounts.filter((a) => a.toLowerCase() !== owner.toLowerCase()))
      return { ...target, functionName: 'transferFrom', args: [owner, to, tokenId], from: owner }
    }
    if (action === 'burn') {
      if (minted >= MAX_MINTED_PER_COLLECTION) return undefined // No more mints: keep the supply.
      return { ...target, functionName: 'burn', args: [tokenId], from: owner }
    }
    if (c.key === 'postcards')
      return { ...target, functionName: 'refreshMetadata', args: [tokenId], from: deployer }
    if (c.key === 'glyphs') return { ...target, functionName: 'reroll', args: [tokenId], from: owner }
    return undefined // The ERC-2309 collection has immutable metadata.
  }

  // Burns are rare by weight (8 %): on a slow machine a minute could pass without one.
  let sinceBurn = 0
  async function sendRandom(count: number, forcedAction?: Action) {
    for (let i = 0; i < count && !stopped; i++) {
      const action = forcedAction ?? (sinceBurn >= BURN_AT_LEAST_EVERY - 1 ? 'burn' : undefined)
      const call = await randomCall(action).catch(() => undefined)
      if (!call) {
        sinceBurn++ // an impossible burn (a full collection) must not stop the other actions
        continue
      }
      const sent = await sendCall(clients, call).then(
        () => true,
        (error: Error) => {
          logger.debug({ err: error.message.split('\n')[0], call: call.functionName }, 'devnet tx refused')
          return false
        },
      )
      if (sent && call.functionName === 'burn') sinceBurn = 0
      else sinceBurn++
    }
  }

  async function reorg(depth: number): Promise<ReorgResult> {
    const result = await reorgChain(clients, {
      depth,
      accounts,
      blockTimeSeconds: options.blockTimeSeconds,
      // Other transfers than the ones dropped: a mint and a transfer per new block.
      sendReplacementTransactions: async () => {
        await sendRandom(1, 'mint')
        await sendRandom(1, 'transfer')
      },
    })
    const last = result.replaced[result.replaced.length - 1]!
    logger.info(
      {
        depth,
        commonAncestor: result.commonAncestor.toString(),
        block: last.number.toString(),
        oldHash: last.oldHash,
        newHash: last.newHash,
      },
      `devnet chain reorganised: blocks ${result.commonAncestor + 1n}..${last.number} replaced`,
    )
    return result
  }

  async function round() {
    if (reorgEveryMs > 0 && Date.now() >= nextReorgAt) {
      nextReorgAt = Date.now() + jitter(reorgEveryMs)
      await reorg(1 + Math.floor(Math.random() * 3)).catch((error: Error) =>
        logger.warn({ err: error.message }, 'devnet reorg failed'),
      )
      return
    }
    await sendRandom(1 + Math.floor(Math.random() * 3))
    await unblockSenders()
  }

  /** A transaction queued behind a nonce gap would block its sender for good; drop such leftovers. */
  async function unblockSenders() {
    const status = (await clients.test.request({ method: 'txpool_status', params: [] } as never)) as {
      queued: string
    }
    if (BigInt(status.queued) === 0n) return
    await clients.test.request({ method: 'anvil_dropAllTransactions', params: [] } as never)
    logger.debug({ queued: Number(status.queued) }, 'devnet dropped transactions stuck behind a nonce gap')
  }

  function schedule() {
    if (stopped) return
    const delay = tick.min + Math.random() * (tick.max - tick.min)
    timer = setTimeout(() => {
      exclusive(round)
        .catch((error: Error) => logger.warn({ err: error.message }, 'devnet activity round failed'))
        .finally(schedule)
    }, delay)
  }
  schedule()

  return {
    reorg: (depth) => exclusive(() => reorg(depth)),
    async stop() {
      stopped = true
      clearTimeout(timer)
      await queue
    },
  }
}

function weightedAction(): Action {
  const total = ACTION_WEIGHTS.reduce((sum, [, weight]) => sum + weight, 0)
  let roll = Math.random() * total
  for (const [action, weight] of ACTION_WEIGHTS) {
    roll -= weight
    if (roll < 0) return action
  }
  return 'transfer'
}

/** ±25 % so reorgs do not arrive like clockwork. */
function jitter(ms: number): number {
  return ms * (0.75 + Math.random() * 0.5)
}
