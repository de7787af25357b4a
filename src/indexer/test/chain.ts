/**
 * Test chain helpers: an anvil devnet, the test contracts (compiled from
 * ./contracts with solc-js), deploy and send helpers.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Abi, Address, Hex } from 'viem'
import { type CompiledContracts, compileContracts } from '@/dev/contracts/compile'
import { type AnvilInstance, startAnvil } from '@/dev/devnet/anvil'
import { createDevnetClients, type DevnetClients } from '@/dev/devnet/collections'

const contractsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'contracts')
export const TEST_CONTRACT_FILES = [
  'TestNFT',
  'TestFactory',
  'TestConsecutive',
  'TestConsecutiveURI',
  'LegacyKitties',
  'Decoys',
  'HostileURIs',
  'Multicall3',
  'TestEditions',
].map((name) => path.join(contractsDir, `${name}.sol`))

export interface TestChain {
  anvil: AnvilInstance
  clients: DevnetClients
  accounts: Address[]
  artifacts: CompiledContracts
  deploy(contractName: string, args?: unknown[]): Promise<{ address: Address; block: bigint; txHash: Hex }>
  send(
    address: Address,
    contractName: string,
    functionName: string,
    args?: unknown[],
    from?: Address,
  ): Promise<Hex>
  /** Sends and waits for the receipt (automine: one block per transaction). */
  call(
    address: Address,
    contractName: string,
    functionName: string,
    args?: unknown[],
    from?: Address,
  ): Promise<bigint>
  head(): Promise<bigint>
  stop(): Promise<void>
}

export async function startTestChain(options: { port?: number } = {}): Promise<TestChain> {
  const [artifacts, anvil] = await Promise.all([
    compileContracts(TEST_CONTRACT_FILES),
    startAnvil({ port: options.port }),
  ])
  const clients = createDevnetClients(anvil.rpcUrl, 31337)
  const accounts = await clients.wallet.getAddresses()
  const abiOf = (name: string): Abi => {
    const artifact = artifacts[name]
    if (!artifact) throw new Error(`test contract ${name} not compiled`)
    return artifact.abi
  }
  const chain: TestChain = {
    anvil,
    clients,
    accounts,
    artifacts,
    async deploy(contractName, args = []) {
      const artifact = artifacts[contractName]!
      const txHash = await clients.wallet.deployContract({
        abi: artifact.abi,
        bytecode: artifact.bytecode,
        args,
        account: accounts[0]!,
        chain: null,
      })
      const receipt = await clients.public.waitForTransactionReceipt({ hash: txHash })
      if (!receipt.contractAddress) throw new Error(`deploying ${contractName} failed`)
      return { address: receipt.contractAddress.toLowerCase() as Address, block: receipt.blockNumber, txHash }
    },
    send(address, contractName, functionName, args = [], from = accounts[0]!) {
      return clients.wallet.writeContract({
        address,
        abi: abiOf(contractName),
        functionName,
        args,
        account: from,
        chain: null,
        gas: 25_000_000n,
      })
    },
    async call(address, contractName, functionName, args = [], from) {
      const hash = await chain.send(address, contractName, functionName, args, from)
      const receipt = await clients.public.waitForTransactionReceipt({ hash })
      if (receipt.status !== 'success') throw new Error(`${contractName}.${functionName} reverted`)
      return receipt.blockNumber
    },
    head: () => clients.public.getBlockNumber({ cacheTime: 0 }),
    stop: () => anvil.stop(),
  }
  return chain
}
