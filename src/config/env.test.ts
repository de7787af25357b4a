import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError, parseConfig } from './env'

const ROOT = path.resolve(import.meta.dirname, '../..')

describe('configuration contract', () => {
  it('applies the documented defaults', () => {
    const config = parseConfig({})
    expect(config.PORT).toBe(3000)
    expect(config.PUBLIC_URL).toBe('http://localhost:3000')
    expect(config.NETWORK).toBe('devnet')
    expect(config.CHAIN_ID).toBe(31337)
    expect(config.START_BLOCK).toBe(0)
    expect(config.CONFIRMATIONS).toBe(2) // embedded devnet
    expect(config.TRUST_PROXY).toBe(0)
    expect(config.embeddedDatabase).toBe(true)
    expect(config.embeddedChain).toBe(true)
    expect(config.INDEXER_VERIFY).toBe('on')
    expect(config.RPC_TIMEOUT_MS).toBe(15_000)
  })

  it('takes several RPC endpoints separated by commas', () => {
    const config = parseConfig({ RPC_URL: 'https://a.example/v2/key, http://127.0.0.1:8545' })
    expect(config.RPC_URL).toBe('https://a.example/v2/key, http://127.0.0.1:8545')
    expect(config.embeddedChain).toBe(false)
  })

  it('takes several gateways separated by commas, and the metadata budgets', () => {
    const config = parseConfig({
      IPFS_GATEWAY: 'https://a.example/ipfs/, https://b.example/ipfs/',
      ARWEAVE_GATEWAY: 'https://ar.example/',
      METADATA_CONCURRENCY: '128',
    })
    expect(config.IPFS_GATEWAY).toBe('https://a.example/ipfs/, https://b.example/ipfs/')
    expect(config.METADATA_CONCURRENCY).toBe(128)
    expect(config.METADATA_HOST_CONCURRENCY).toBe(4)
    expect(config.METADATA_GATEWAY_CONCURRENCY).toBe(32)
  })

  it('uses 12 confirmations on a real chain and takes explicit values', () => {
    const config = parseConfig({
      RPC_URL: 'https://rpc.example/v1',
      DATABASE_URL: 'postgres://u@h:5432/db',
      PORT: '8080',
      NETWORK: 'mainnet',
      CHAIN_ID: '1',
      START_BLOCK: '17000000',
    })
    expect(config.CONFIRMATIONS).toBe(12)
    expect(config.PUBLIC_URL).toBe('http://localhost:8080')
    expect(config.START_BLOCK).toBe(17_000_000)
    expect(config.embeddedDatabase).toBe(false)
    expect(config.embeddedChain).toBe(false)
  })

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['RPC_URL', 'not a url'],
    ['RPC_URL', 'https://a.example/rpc,not a url'],
    ['INDEXER_VERIFY', 'maybe'],
    ['RPC_TIMEOUT_MS', '10'],
    ['IPFS_GATEWAY', 'https://a.example/ipfs/,ipfs.io'],
    ['METADATA_CONCURRENCY', '0'],
    ['METADATA_HOST_CONCURRENCY', 'many'],
    ['CHAIN_ID', '-1'],
    ['START_BLOCK', '1.5'],
    ['NETWORK', 'Main Net'],
    ['AUTH_SECRET', 'short'],
    ['LOG_LEVEL', 'loud'],
  ])('rejects %s=%s naming the variable', (variable, value) => {
    let error: unknown
    try {
      parseConfig({ [variable]: value })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe(variable)
    expect((error as Error).message).toContain(variable)
    expect((error as Error).message).not.toContain('\n')
  })

  it('a process started with PORT=abc stops with one clear line and a non-zero exit code', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/start/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: 'abc' },
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(result.status).not.toBe(0)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^Invalid configuration: PORT /)
  })
})
