/**
 * Keeps the devnet alive: every 1–2 s a few mints, transfers between the funded dev accounts,
 * burns and now and then an ERC-4906 metadata update; on the ERC-1155 editions single and batch
 * mints, transfers (TransferSingle, TransferBatch) and burns, and now and then a revised edition
 * (a URI event); about every `reorgEveryMs` a chain reorganisation of depth 1..3. A failed
 * transaction is logged at debug level and skipped — the generator never stops because of one.
 */
import pino from 'pino'
import type { Address } from 'viem'
import type { CompiledContracts } from '../contracts/compile'
import {
  artifactFor,
  type DeployedCollection,
  type DevnetClients,
  EDITION_IDS,
  editionBalances,
  isEditions,
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
/** Above this many editions in circulation (all ids together) the editions see no more mints. */
const MAX_EDITIONS_SUPPLY = 20_000n

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
    if (isEditions(c)) return randomEditionsCall(c, forcedAction ?? weightedAction())
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

  /** Single and batch calls alternate, so both event shapes keep appearing. */
  let batchNext = false
  async function randomEditionsCall(
    c: DeployedCollection,
    action: Action,
  ): Promise<SendContractCall | undefined> {
    const target = { address: c.address, abi: abiOf(c) }
    batchNext = !batchNext
    const batch = batchNext
    const balances = await editionBalances(clients, target, accounts)
    const holders = accounts.flatMap((account, i) => {
      const held = EDITION_IDS.flatMap((id, j) =>
        balances[i]![j]! > 0n ? [{ id, balance: balances[i]![j]! }] : [],
      )
      return held.length > 0 ? [{ account, held }] : []
    })
    if (action === 'mint' || holders.length === 0) {
      const supply = (await clients.public.readContract({ ...target, functionName: 'totalSupply' })) as bigint
      if (supply >= MAX_EDITIONS_SUPPLY) return undefined
      const to = randomItem(accounts)
      const amount = () => BigInt(1 + Math.floor(Math.random() * 5))
      if (!batch)
        return {
          ...target,
          functionName: 'mint',
          args: [to, randomItem(EDITION_IDS), amount()],
          from: deployer,
        }
      const ids = randomSubset(EDITION_IDS, 2 + Math.floor(Math.random() * 2))
      return { ...target, functionName: 'mintBatch', args: [to, ids, ids.map(amount)], from: deployer }
    }
    if (action === 'update') {
      return { ...target, functionName: 'refreshMetadata', args: [randomItem(EDITION_IDS)], from: deployer }
    }
    const { account: from, held } = randomItem(holders)
    // Part of each balance, at least 1: a holder usually keeps some.
    const part = (balance: bigint) => 1n + BigInt(Math.floor(Math.random() * Number(balance / 2n)))
    const moved =
      batch && held.length >= 2
        ? randomSubset(held, 2 + Math.floor(Math.random() * (held.length - 1)))
        : [randomItem(held)]
    const ids = moved.map((h) => h.id)
    const amounts = moved.map((h) => part(h.balance))
    if (action === 'burn') {
      return moved.length > 1
        ? { ...target, functionName: 'burnBatch', args: [from, ids, amounts], from }
        : { ...target, functionName: 'burn', args: [from, ids[0], amounts[0]], from }
    }
    const to = randomItem(accounts.filter((a) => a.toLowerCase() !== from.toLowerCase()))
    return moved.length > 1
      ? { ...target, functionName: 'safeBatchTransferFrom', args: [from, to, ids, amounts, '0x'], from }
      : { ...target, functionName: 'safeTransferFrom', args: [from, to, ids[0], amounts[0], '0x'], from }
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
      if (sent && call.functionName.startsWith('burn')) sinceBurn = 0
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

/** `count` distinct items in their original order (ERC-1155 batches name each id once). */
function randomSubset<T>(items: T[], count: number): T[] {
  const chosen = new Set<number>()
  while (chosen.size < Math.min(count, items.length)) chosen.add(Math.floor(Math.random() * items.length))
  return [...chosen].sort((a, b) => a - b).map((i) => items[i]!)
}

/** ±25 % so reorgs do not arrive like clockwork. */
function jitter(ms: number): number {
  return ms * (0.75 + Math.random() * 0.5)
}
