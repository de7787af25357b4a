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
    expect(config.INDEXER_PROOF_SAMPLE_RATE).toBe(0.01)
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

  it('takes read replicas of DATABASE_URL, and refuses them without it', () => {
    const replicas = 'postgres://r@replica-1:5432/db, postgres://r@replica-2:5432/db'
    const config = parseConfig({ DATABASE_URL: 'postgres://u@h:5432/db', DATABASE_READ_URL: replicas })
    expect(config.DATABASE_READ_URL).toBe(replicas)
    expect(config.DATABASE_READ_MAX_LAG_S).toBe(5)
    expect(parseConfig({}).DATABASE_READ_URL).toBeUndefined()
    expect(() => parseConfig({ DATABASE_READ_URL: 'postgres://r@replica-1/db' })).toThrow(
      'Invalid configuration: DATABASE_READ_URL needs DATABASE_URL',
    )
  })

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['RPC_URL', 'not a url'],
    ['RPC_URL', 'https://a.example/rpc,not a url'],
    ['INDEXER_VERIFY', 'maybe'],
    ['INDEXER_PROOF_SAMPLE_RATE', '1.5'],
    ['INDEXER_PROOF_SAMPLE_RATE', 'often'],
    ['RPC_TIMEOUT_MS', '10'],
    ['IPFS_GATEWAY', 'https://a.example/ipfs/,ipfs.io'],
    ['METADATA_CONCURRENCY', '0'],
    ['METADATA_HOST_CONCURRENCY', 'many'],
    ['CHAIN_ID', '-1'],
    ['START_BLOCK', '1.5'],
    ['NETWORK', 'Main Net'],
    ['AUTH_SECRET', 'short'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_READ_URL', 'postgres://r@replica-1/db,mysql://r@replica-2/db'],
    ['DATABASE_READ_MAX_LAG_S', '0'],
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

  // Secrets that must never reach a terminal or a log, whatever is wrong with the value.
  it.each([
    ['AUTH_SECRET', 'hunter2-but-short', 'hunter2', undefined],
    ['DATABASE_URL', 'mysql://admin:s3cr3t-pw@db.internal:3306/nft', 's3cr3t-pw', 'mysql://db.internal:3306'],
    ['DATABASE_URL', 'postgres://admin:s3cr3t-pw@db.internal:54x2/nft', 's3cr3t-pw', undefined],
    ['DATABASE_URL', 'postgres://admin:s3c/r3t@db.internal/nft', 's3c/r3t', undefined],
    // A password holding an unescaped / ? # : the parser would take "admin:1234" for host and port.
    ['DATABASE_URL', 'postgres://admin:1234/s3cr3t@db.internal/nft', ':1234', undefined],
    ['DATABASE_URL', 'mysql://admin:1234/s3cr3t@db.internal/nft', ':1234', undefined],
    ['REDIS_URL', 'redis://admin:1234?s3cr3t@cache.internal:6379', ':1234', undefined],
    [
      'DATABASE_READ_URL',
      'postgres://replica.internal/nft,postgres://admin:1234#s3@r/nft',
      ':1234',
      undefined,
    ],
    ['RPC_URL', 'https://node.example/rpc,https://admin:1234/s3cr3t@node.example', ':1234', undefined],
    [
      'DATABASE_READ_URL',
      'postgres://admin:s3cr3t-pw@replica.internal:5432/nft,redis://admin:s3cr3t-pw@x/',
      's3cr3t-pw',
      'postgres://replica.internal:5432',
    ],
    ['REDIS_URL', 'http://:s3cr3t-pw@cache.internal:6379/0', 's3cr3t-pw', 'http://cache.internal:6379'],
    ['REDIS_URL', 'redis//default:s3cr3t-pw@cache.internal:6379', 's3cr3t-pw', undefined],
    [
      'RPC_URL',
      'wss://eth-mainnet.g.alchemy.com/v2/AbCdEf0123456789KeY',
      'AbCdEf0123456789KeY',
      'wss://eth-mainnet.g.alchemy.com',
    ],
    ['RPC_URL', 'https://mainnet.example/rpc?apikey=AbCdEf0123456789KeY x', 'AbCdEf0123456789KeY', undefined],
    ['RPC_URL', 'ftp://user:AbCdEf0123456789KeY@node.example/', 'AbCdEf0123456789KeY', 'ftp://node.example'],
  ])('names %s and the reason, never its secret (%s)', (variable, value, secret, shown) => {
    let error: unknown
    try {
      parseConfig({ [variable]: value })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as Error).message
    expect(message).toMatch(new RegExp(`^Invalid configuration: ${variable} must `))
    expect(message).not.toContain(secret)
    expect((error as ConfigError).reason).not.toContain(secret)
    // The user part of a URL is not shown either.
    expect(message).not.toContain('admin')
    if (shown) expect(message).toContain(shown)
    expect(message).not.toContain('\n')
  })

  it('still shows a value that carries no secret', () => {
    expect(() => parseConfig({ LOG_LEVEL: 'loud' })).toThrow('(got "loud")')
    expect(() => parseConfig({ PORT: 'abc' })).toThrow('(got "abc")')
  })

  it('a process started with a bad secret-bearing URL prints one line without the secret', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/start/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: 'mysql://admin:s3cr3t-pw@db.internal/nft' },
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(result.status).toBe(2)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toMatch(/^Invalid configuration: DATABASE_URL /)
    expect(result.stderr + result.stdout).not.toContain('s3cr3t-pw')
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
