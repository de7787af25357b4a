/** Runs the indexer in-process for a test, with fast polling and a test logger. */
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type pg from 'pg'
import pino from 'pino'
import { type Config, parseConfig } from '@/config/env'
import { type RunIndexerOptions, runIndexer } from '../run-indexer'

export const testLogger = () => pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' })

export function testConfig(env: Record<string, string | undefined>): Config {
  return parseConfig({
    NODE_ENV: 'test',
    CONFIRMATIONS: '2',
    MEDIA_DIR: mkdtempSync(path.join(os.tmpdir(), 'indexer-media-')),
    LOG_LEVEL: (process.env.TEST_LOG_LEVEL as string) ?? 'silent',
    ...env,
  } as NodeJS.ProcessEnv)
}

export interface RunningIndexer {
  stop(): Promise<void>
  /** Settles when the indexer stops on its own (error) or after stop(). */
  done: Promise<void>
}

export function startIndexer(
  config: Config,
  pool: pg.Pool,
  options: Partial<Omit<RunIndexerOptions, 'config' | 'pool' | 'signal'>> = {},
): RunningIndexer {
  const controller = new AbortController()
  const done = runIndexer({
    config,
    pool,
    logger: options.logger ?? testLogger(),
    signal: controller.signal,
    ...options,
    sync: { pollIntervalMs: 100, ...options.sync },
    metadata: { idleMs: 200, ...options.metadata },
    // Rankings follow metadata within a few hundred ms (docs/database.md, "Stored rarity").
    rarity: { debounceMs: 200, pollMs: 100, ...options.rarity },
  })
  done.catch(() => undefined)
  return {
    done,
    async stop() {
      controller.abort()
      await done.catch(() => undefined)
    },
  }
}
