import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createPublicClient, createWalletClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ANVIL_STOPPED_STATUSES, startAnvil } from './anvil'

let workDir: string

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'anvil-test-'))
})

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true })
})

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  return condition()
}

describe('startAnvil', () => {
  it('starts on a free port with automine, and stop() ends the process', async () => {
    const anvil = await startAnvil({})
    try {
      expect(anvil.port).toBeGreaterThan(0)
      const client = createPublicClient({ transport: http(anvil.rpcUrl) })
      expect(await client.getChainId()).toBe(31337)
      const wallet = createWalletClient({ transport: http(anvil.rpcUrl) })
      const [from, to] = await wallet.getAddresses()
      const before = await client.getBlockNumber({ cacheTime: 0 })
      const hash = await wallet.sendTransaction({ account: from!, to: to!, value: 1n, chain: null })
      const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 })
      // Automine: the transaction got a block of its own right away.
      expect(receipt.blockNumber).toBe(before + 1n)
    } finally {
      await anvil.stop()
    }
    expect(await waitUntil(() => !isAlive(anvil.pid), 2_000)).toBe(true)
  }, 30_000)

  it('keeps the chain in a state file across restarts, with a custom chain id', async () => {
    const stateFile = path.join(workDir, 'state.json')
    const first = await startAnvil({ stateFile, chainId: 4242 })
    const client = createPublicClient({ transport: http(first.rpcUrl) })
    await client.request({ method: 'evm_mine' as never })
    await client.request({ method: 'evm_mine' as never })
    const block = await client.getBlock({ blockNumber: 2n })
    await first.stop()

    const second = await startAnvil({ stateFile, chainId: 4242 })
    try {
      const again = createPublicClient({ transport: http(second.rpcUrl) })
      expect(await again.getChainId()).toBe(4242)
      expect(await again.getBlockNumber({ cacheTime: 0 })).toBe(2n)
      expect((await again.getBlock({ blockNumber: 2n })).hash).toBe(block.hash)
    } finally {
      await second.stop()
    }
  }, 30_000)

  it('mines on an interval when blockTime is set', async () => {
    const anvil = await startAnvil({ blockTime: 1 })
    try {
      const client = createPublicClient({ transport: http(anvil.rpcUrl) })
      const start = await client.getBlockNumber({ cacheTime: 0 })
      await new Promise((resolve) => setTimeout(resolve, 2_300))
      expect(await client.getBlockNumber({ cacheTime: 0 })).toBeGreaterThanOrEqual(start + 2n)
    } finally {
      await anvil.stop()
    }
  }, 30_000)

  it('runs outside the starter’s process group, and a signal to it is a stop', async () => {
    const anvil = await startAnvil({})
    try {
      // Ctrl-C signals the terminal's foreground process group: anvil is not in it.
      const group = (pid: number) =>
        Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2])
      expect(group(anvil.pid)).not.toBe(group(process.pid))
      // Sent again each second: right after start-up anvil has its handler but may not listen
      // yet, and loses a signal that arrives then (src/dev/devnet/anvil.ts, the guard).
      const interrupt = () => {
        try {
          process.kill(anvil.pid, 'SIGINT')
        } catch {
          // Already gone.
        }
      }
      const again = setInterval(interrupt, 1_000)
      interrupt()
      try {
        expect(ANVIL_STOPPED_STATUSES).toContain(await anvil.exited)
      } finally {
        clearInterval(again)
      }
    } finally {
      await anvil.stop()
    }
  })

  it('a signal to the guard stops anvil with it', async () => {
    const anvil = await startAnvil({})
    try {
      const guard = Number(readFileSync(`/proc/${anvil.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
      expect(guard).not.toBe(process.pid)
      process.kill(guard, 'SIGTERM')
      expect(ANVIL_STOPPED_STATUSES).toContain(await anvil.exited)
      expect(await waitUntil(() => !isAlive(anvil.pid), 5_000)).toBe(true)
    } finally {
      await anvil.stop()
    }
  })

  it('leaves no orphan when the parent process is killed outright', async () => {
    const anvilModule = pathToFileURL(
      path.join(path.dirname(fileURLToPath(import.meta.url)), 'anvil.ts'),
    ).href
    const script = path.join(workDir, 'parent.mjs')
    await writeFile(
      script,
      `import { startAnvil } from ${JSON.stringify(anvilModule)}\n` +
        "const anvil = await startAnvil({})\nconsole.log('pid ' + anvil.pid)\nsetInterval(() => {}, 1000)\n",
    )
    const parent = spawn(process.execPath, ['--import', 'tsx', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const anvilPid = await new Promise<number>((resolve, reject) => {
      let output = ''
      parent.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString()
        const match = /pid (\d+)/.exec(output)
        if (match) resolve(Number(match[1]))
      })
      parent.once('exit', (code) => reject(new Error(`parent exited early with ${code}`)))
    })
    expect(isAlive(anvilPid)).toBe(true)
    parent.kill('SIGKILL')
    expect(await waitUntil(() => !isAlive(anvilPid), 5_000)).toBe(true)
  }, 30_000)
})
