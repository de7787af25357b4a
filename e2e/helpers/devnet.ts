/**
 * The service's own devnet, as the test process reaches it: its RPC URL is
 * read from the service log (`embedded anvil devnet ready`), and contracts
 * are compiled with the project's solc-js helper and deployed from a fresh,
 * funded key (so the devnet's own accounts keep their nonces).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  http,
  parseEther,
  WaitForTransactionReceiptTimeoutError,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { compileContracts } from '@/dev/contracts/compile'

const ROOT = path.resolve(import.meta.dirname, '../..')

export function devnetRpcUrl(): string {
  const log = readFileSync(
    process.env.E2E_SERVICE_LOG ?? path.join(ROOT, 'e2e/artifacts/service.log'),
    'utf8',
  )
  for (const line of log.split('\n')) {
    if (!line.includes('embedded anvil devnet ready')) continue
    try {
      const rpcUrl = (JSON.parse(line) as { rpcUrl?: string }).rpcUrl
      if (rpcUrl) return rpcUrl
    } catch {
      // not a JSON line
    }
  }
  throw new Error('the service log names no devnet RPC URL')
}

/** Deployments and calls tried before giving up: the devnet's reorganisations drop transactions. */
const DEPLOY_ATTEMPTS = 3
/** The devnet mines a block a second: a deployment not mined by then was dropped. */
const RECEIPT_TIMEOUT_MS = 10_000

/**
 * Deploys E2EContractWallet (ERC-1271) owned by `owner`; returns its address once it holds code.
 */
export function deployContractWallet(owner: Address): Promise<Address> {
  return deployE2EContract('E2EContractWallet', [owner])
}

/**
 * Deploys `e2e/contracts/<name>.sol`'s contract `name` with `args`; returns its address once it
 * holds code. A reorganisation drops the transactions waiting in the devnet's pool and those of
 * the blocks it replaces, so a deployment whose receipt does not come, or whose code is gone
 * after it, is sent again, from another fresh key.
 */
export async function deployE2EContract(name: string, args: unknown[]): Promise<Address> {
  const compiled = (await compileContracts([path.join(ROOT, `e2e/contracts/${name}.sol`)]))[name]
  if (!compiled) throw new Error(`${name} did not compile`)
  for (let attempt = 1; ; attempt++) {
    try {
      const address = await deployOnce(compiled, args)
      if (await hasCode(address)) return address
      if (attempt >= DEPLOY_ATTEMPTS) throw new Error('the deployment was dropped by every attempt')
    } catch (err) {
      if (!(err instanceof WaitForTransactionReceiptTimeoutError) || attempt >= DEPLOY_ATTEMPTS) throw err
    }
  }
}

type CompiledContract = NonNullable<Awaited<ReturnType<typeof compileContracts>>[string]>

/** A fresh key, funded on the devnet, and the clients to send from it. */
async function freshWallet() {
  const rpcUrl = devnetRpcUrl()
  const publicClient = createPublicClient({ transport: http(rpcUrl) })
  const chainId = await publicClient.getChainId()
  const account = privateKeyToAccount(generatePrivateKey())
  await publicClient.request({
    method: 'anvil_setBalance',
    params: [account.address, `0x${parseEther('10').toString(16)}`],
  } as never)
  const wallet = createWalletClient({
    account,
    chain: {
      id: chainId,
      name: 'devnet',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    },
    transport: http(rpcUrl),
  })
  return { account, publicClient, wallet }
}

async function deployOnce(contract: CompiledContract, args: unknown[]): Promise<Address> {
  const { publicClient, wallet } = await freshWallet()
  const hash = await wallet.deployContract({
    abi: contract.abi,
    bytecode: contract.bytecode,
    args,
  })
  const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: RECEIPT_TIMEOUT_MS })
  if (!receipt.contractAddress) throw new Error('deployment produced no contract')
  return receipt.contractAddress
}

/**
 * Calls `functionName` of `e2e/contracts/<name>.sol`'s contract at `address` from a fresh,
 * funded key; returns that key's address and the block the call was mined in. A call whose
 * receipt does not come was dropped by a reorganisation: it is sent again from another fresh
 * key, as deployments are. A reorganisation may still take a mined call away, so callers check
 * its effect.
 */
export async function callE2EContract(
  name: string,
  address: Address,
  functionName: string,
  args: unknown[],
): Promise<{ from: Address; blockNumber: bigint }> {
  const compiled = (await compileContracts([path.join(ROOT, `e2e/contracts/${name}.sol`)]))[name]
  if (!compiled) throw new Error(`${name} did not compile`)
  for (let attempt = 1; ; attempt++) {
    const { account, publicClient, wallet } = await freshWallet()
    const hash = await wallet.writeContract({ address, abi: compiled.abi, functionName, args } as never)
    try {
      const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: RECEIPT_TIMEOUT_MS })
      if (receipt.status !== 'success') throw new Error(`${functionName} reverted`)
      return { from: account.address, blockNumber: receipt.blockNumber }
    } catch (err) {
      if (!(err instanceof WaitForTransactionReceiptTimeoutError) || attempt >= DEPLOY_ATTEMPTS) throw err
    }
  }
}

/** true while `address` holds code (a devnet reorg could drop a fresh deployment). */
async function hasCode(address: Address): Promise<boolean> {
  const code = await createPublicClient({ transport: http(devnetRpcUrl()) }).getCode({ address })
  return code !== undefined && code !== '0x'
}
