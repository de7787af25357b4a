/**
 * The private redis-server of a test file: every server it starts is gone
 * after stop(), whatever happened in between — a start while running, a start
 * that failed — so no test leaves one running after the suite.
 */
import { execFileSync } from 'node:child_process'
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startTestRedis, type TestRedis } from './redis-server'

/** Pids of redis-server processes listening on `port` (by their command line). */
function serversOn(port: number): number[] {
  try {
    return execFileSync('pgrep', ['-f', `^redis-server 127\\.0\\.0\\.1:${port}\\b`], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number)
  } catch {
    return [] // pgrep exits 1 when nothing matches
  }
}

let redis: TestRedis | undefined

afterEach(async () => {
  await redis?.stop()
  redis = undefined
})

describe('startTestRedis', () => {
  it('stop() leaves no server running, even after a second start()', async () => {
    redis = await startTestRedis()
    expect(serversOn(redis.port)).toHaveLength(1)
    // limits.test.ts starts it again in a finally block after it was already back.
    await redis.start()
    await redis.start()
    expect(serversOn(redis.port)).toHaveLength(1)
    await redis.stop()
    expect(serversOn(redis.port)).toEqual([])
  })

  it('restarts on the same port after stop()', async () => {
    redis = await startTestRedis()
    await redis.stop()
    await redis.start()
    expect(serversOn(redis.port)).toHaveLength(1)
    await redis.stop()
    expect(serversOn(redis.port)).toEqual([])
  })

  it('a start that cannot listen fails and leaves nothing behind', async () => {
    redis = await startTestRedis()
    await redis.stop()
    // Someone else took the port meanwhile.
    const squatter = net.createServer((socket) => socket.destroy())
    await new Promise<void>((resolve) => squatter.listen(redis!.port, '127.0.0.1', resolve))
    try {
      await expect(redis.start()).rejects.toThrow(/redis-server/)
      expect(serversOn(redis.port)).toEqual([])
    } finally {
      await new Promise((resolve) => squatter.close(resolve))
    }
  })
})
