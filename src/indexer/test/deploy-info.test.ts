/**
 * Deploy block, creator and creating transaction of a collection (findDeployInfo)
 * against anvil: direct deployments (eth_getBlockReceipts) and collections a factory
 * contract created (trace_block), including a block where a reverted transaction
 * created the same address first.
 */
import { type Address, type Hex, parseEventLogs } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { findDeployInfo } from '../metadata/deploy-info'
import { createRpc, type Rpc } from '../rpc/client'
import { startTestChain, type TestChain } from './chain'
import { startIndexer, testConfig, testLogger } from './indexer'
import { waitFor, waitForIndexed } from './oracle'

interface Deployed {
  address: Address
  block: bigint
  txHash: Hex
}

let chain: TestChain
let db: TestDatabase
let rpc: Rpc
let factory: Address
let direct: Deployed
let viaCreate: Deployed
let viaCreate2: Deployed
let afterRevert: Deployed
let revertedTx: Hex

/** The collection a factory transaction created, from the factory's Created event. */
async function createdBy(txHash: Hex): Promise<Deployed> {
  const receipt = await chain.clients.public.waitForTransactionReceipt({ hash: txHash })
  if (receipt.status !== 'success') throw new Error(`factory transaction ${txHash} reverted`)
  const [created] = parseEventLogs({
    abi: chain.artifacts.TestFactory!.abi,
    logs: receipt.logs,
    eventName: 'Created',
  }) as unknown as { args: { collection: Address } }[]
  if (!created) throw new Error(`factory transaction ${txHash} created nothing`)
  return { address: created.args.collection.toLowerCase() as Address, block: receipt.blockNumber, txHash }
}

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  rpc = createRpc({ url: chain.anvil.rpcUrl, logger: testLogger() })
  const [alice, bob] = chain.accounts
  factory = (await chain.deploy('TestFactory')).address
  // Blocks in between, so a search that stops early or late gives a different block.
  direct = await chain.deploy('TestNFT', ['Direct Apes', 'DAPE', 'http://127.0.0.1:9/meta/'])
  await chain.call(direct.address, 'TestNFT', 'mint', [alice, 1n])
  viaCreate = await createdBy(
    await chain.send(factory, 'TestFactory', 'create', ['Factory Apes', 'FAPE', alice, 3n]),
  )
  await chain.call(viaCreate.address, 'TestNFT', 'move', [alice, bob, 2n])
  viaCreate2 = await createdBy(
    await chain.send(factory, 'TestFactory', 'create2', [
      'Salted Apes',
      'SAPE',
      bob,
      2n,
      `0x${'5a'.repeat(32)}`,
    ]),
  )

  // One block, two transactions: the first creates a collection and reverts (its trace
  // still lists the creation, with the address), the second creates the same address
  // for real, since the revert rolled the factory's nonce back too.
  const sendFactory = (functionName: string, args: unknown[]) =>
    chain.clients.wallet.writeContract({
      address: factory,
      abi: chain.artifacts.TestFactory!.abi,
      functionName,
      args,
      account: alice!,
      chain: null,
      gas: 5_000_000n,
    })
  await chain.clients.test.setAutomine(false)
  try {
    revertedTx = await sendFactory('createAndRevert', ['Undone Apes', 'UAPE', alice])
    const committedTx = await sendFactory('create', ['Second Try Apes', 'STAPE', bob, 1n])
    await chain.clients.test.mine({ blocks: 1 })
    afterRevert = await createdBy(committedTx)
  } finally {
    await chain.clients.test.setAutomine(true)
  }
  const reverted = await chain.clients.public.getTransactionReceipt({ hash: revertedTx })
  expect(reverted.status).toBe('reverted')
  expect(reverted.blockNumber).toBe(afterRevert.block)
}, 120_000)

afterAll(async () => {
  await chain?.stop()
  await db?.drop()
})

describe('findDeployInfo', () => {
  it('finds a direct deployment from the block receipts: the deploying account', async () => {
    const mintBlock = direct.block + 1n
    expect(await findDeployInfo(rpc, direct.address, mintBlock)).toEqual({
      deployBlock: direct.block,
      creatorAddress: chain.accounts[0]!.toLowerCase(),
      deployTxHash: direct.txHash.toLowerCase(),
    })
  })

  it('finds a factory deployment from trace_block: the factory and the factory call', async () => {
    // The collection's first event (its mints) is in the creating transaction itself.
    const info = await findDeployInfo(rpc, viaCreate.address, viaCreate.block)
    expect(info).toEqual({
      deployBlock: viaCreate.block,
      creatorAddress: factory.toLowerCase(),
      deployTxHash: viaCreate.txHash.toLowerCase(),
    })
    expect(info.creatorAddress).not.toBe(chain.accounts[0]!.toLowerCase())
    // Without a first-seen block the search starts at the head and finds the same.
    expect(await findDeployInfo(rpc, viaCreate.address, null)).toEqual(info)
  })

  it('finds a CREATE2 factory deployment', async () => {
    expect(await findDeployInfo(rpc, viaCreate2.address, viaCreate2.block)).toEqual({
      deployBlock: viaCreate2.block,
      creatorAddress: factory.toLowerCase(),
      deployTxHash: viaCreate2.txHash.toLowerCase(),
    })
  })

  it('skips a creation of the same address inside a reverted transaction earlier in the block', async () => {
    const traces = await rpc.request<
      { type: string; result?: { address?: string }; transactionHash: string }[]
    >('trace_block', [`0x${afterRevert.block.toString(16)}`])
    const creations = traces.filter((t) => t.type === 'create' && t.result?.address === afterRevert.address)
    // The premise: the node reports both creations with the same address, reverted one first.
    expect(creations.map((t) => t.transactionHash)).toEqual([revertedTx, afterRevert.txHash])
    expect(await findDeployInfo(rpc, afterRevert.address, afterRevert.block)).toEqual({
      deployBlock: afterRevert.block,
      creatorAddress: factory.toLowerCase(),
      deployTxHash: afterRevert.txHash.toLowerCase(),
    })
  })

  it('gives nulls for an address without code', async () => {
    expect(await findDeployInfo(rpc, chain.accounts[3]!, await chain.head())).toEqual({
      deployBlock: null,
      creatorAddress: null,
      deployTxHash: null,
    })
  })
})

describe('indexer', () => {
  it('records deploy_block, creator_address and deploy_tx_hash of direct and factory-created collections', async () => {
    const config = testConfig({ DATABASE_URL: db.url, RPC_URL: chain.anvil.rpcUrl })
    const indexer = startIndexer(config, db.pool)
    try {
      await waitForIndexed(db.pool, chain.clients)
      await waitFor(
        async () => {
          const { rows } = await db.pool.query(
            "SELECT count(*)::int AS n FROM collections WHERE metadata_status <> 'pending'",
          )
          return rows[0].n === 4
        },
        60_000,
        'collection info of 4 collections',
      )
    } finally {
      await indexer.stop()
    }
    const { rows } = await db.pool.query(
      `SELECT address, name, metadata_status, deploy_block::text, creator_address, deploy_tx_hash
         FROM collections ORDER BY deploy_block, address`,
    )
    const row = (name: string, d: Deployed, creator: string) => ({
      address: d.address,
      name,
      metadata_status: 'ok',
      deploy_block: d.block.toString(),
      creator_address: creator.toLowerCase(),
      deploy_tx_hash: d.txHash.toLowerCase(),
    })
    expect(rows).toEqual([
      row('Direct Apes', direct, chain.accounts[0]!),
      row('Factory Apes', viaCreate, factory),
      row('Salted Apes', viaCreate2, factory),
      row('Second Try Apes', afterRevert, factory),
    ])
  })
})
