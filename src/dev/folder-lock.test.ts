/**
 * The data-folder lock (src/dev/folder-lock.ts) that keeps a second embedded PostgreSQL off
 * DATA_DIR/pg and a second devnet off DATA_DIR/devnet.
 *
 * Shows that a lock file left by a crash, `kill -9` or a reboot does not block the folder for
 * ever once its pid has been recycled: here the recorded pid belongs to a process that started
 * after the file was written (a `sleep`), or whose recorded identity is another's, so it cannot
 * be the process that wrote it; `npm start` takes the folder over and `npm run db:migrate` does
 * not take the dead server's leftover URL file for a running service. And that a live holder
 * (another process, or an earlier lock in this one) still blocks, naming its pid; a holder
 * killed with SIGKILL does not.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { FolderInUseError, folderLockHolder, lockFolder } from './folder-lock'
import { runningEmbeddedPostgres, startEmbeddedPostgres } from './postgres'

const cleanups: (() => void | Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nft-folder-lock-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Another program, started now: it may have been handed a crashed holder's pid. */
async function stranger(): Promise<ChildProcess & { pid: number }> {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' })
  cleanups.push(() => {
    child.kill('SIGKILL')
  })
  await new Promise((r) => child.once('spawn', r))
  return child as ChildProcess & { pid: number }
}

describe('a stale embedded-postgres.pid whose pid was recycled', () => {
  /** DATA_DIR/pg as a crashed server left it: pid and URL files, written an hour ago. */
  async function crashedDataDir(): Promise<{ dataDir: string }> {
    const dataDir = path.join(tempDir(), 'pg')
    mkdirSync(dataDir, { recursive: true })
    const { pid } = await stranger()
    const pidFile = path.join(dataDir, 'embedded-postgres.pid')
    const urlFile = path.join(dataDir, 'embedded-postgres.url')
    writeFileSync(pidFile, String(pid))
    writeFileSync(urlFile, 'postgres://postgres@127.0.0.1:1/postgres')
    const anHourAgo = new Date(Date.now() - 3_600_000)
    utimesSync(pidFile, anHourAgo, anHourAgo)
    utimesSync(urlFile, anHourAgo, anHourAgo)
    return { dataDir }
  }

  it('npm start takes the folder over instead of refusing for ever', async () => {
    const { dataDir } = await crashedDataDir()
    let error: unknown
    try {
      const pg = await startEmbeddedPostgres({ dataDir })
      cleanups.push(() => pg.stop())
    } catch (err) {
      error = err
    }
    expect(error === undefined ? undefined : String(error)).toBeUndefined()
  }, 60_000)

  it('db:migrate does not take the dead server for a running service', async () => {
    const { dataDir } = await crashedDataDir()
    expect(runningEmbeddedPostgres(dataDir)).toBeUndefined()
  })
})

describe.skipIf(!existsSync('/proc/self/stat'))('lockFolder', () => {
  it('refuses a second lock in this process until the first is released', () => {
    const dir = tempDir()
    const release = lockFolder(dir, 'x.pid', 'thing')
    expect(() => lockFolder(dir, 'x.pid', 'thing')).toThrow(
      `thing: ${dir} is in use by process ${process.pid}`,
    )
    expect(folderLockHolder(dir, 'x.pid')).toBe(process.pid)
    release()
    expect(existsSync(path.join(dir, 'x.pid'))).toBe(false)
    lockFolder(dir, 'x.pid', 'thing')()
  })

  it('takes over a file naming a live pid whose recorded identity is another process’s', async () => {
    const dir = tempDir()
    const { pid } = await stranger()
    writeFileSync(path.join(dir, 'x.pid'), `${pid}\nnot-this-boot 1\n`)
    expect(folderLockHolder(dir, 'x.pid')).toBeUndefined()
    const release = lockFolder(dir, 'x.pid', 'thing')
    expect(readFileSync(path.join(dir, 'x.pid'), 'utf8').split('\n')[0]).toBe(String(process.pid))
    release()
  })

  it('takes over a file naming this process’s pid that this process does not hold (an earlier run’s)', () => {
    const dir = tempDir()
    writeFileSync(path.join(dir, 'x.pid'), `${process.pid}\n`)
    lockFolder(dir, 'x.pid', 'thing')()
  })

  it('leaves alone, on release, a file another process has taken since', () => {
    const dir = tempDir()
    const release = lockFolder(dir, 'x.pid', 'thing')
    writeFileSync(path.join(dir, 'x.pid'), `${process.ppid}\n`)
    release()
    expect(readFileSync(path.join(dir, 'x.pid'), 'utf8')).toBe(`${process.ppid}\n`)
  })

  it('is refused while another process holds it, and taken over once that process is killed', async () => {
    const dir = tempDir()
    const script =
      `import { lockFolder } from ${JSON.stringify(path.resolve('src/dev/folder-lock.ts'))};` +
      `lockFolder(${JSON.stringify(dir)}, 'x.pid', 'thing'); console.log('locked'); setInterval(() => {}, 1000)`
    const holder = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    cleanups.push(() => {
      holder.kill('SIGKILL')
    })
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.on('data', (data: Buffer) => data.toString().includes('locked') && resolve())
      holder.once('exit', (code) => reject(new Error(`holder exited with ${code}`)))
    })
    expect(folderLockHolder(dir, 'x.pid')).toBe(holder.pid)
    let error: unknown
    try {
      lockFolder(dir, 'x.pid', 'thing')
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(FolderInUseError)
    expect(error).toMatchObject({ folder: dir, holder: holder.pid })

    holder.kill('SIGKILL')
    await new Promise((r) => holder.once('exit', r))
    expect(existsSync(path.join(dir, 'x.pid'))).toBe(true) // no chance to clean up
    lockFolder(dir, 'x.pid', 'thing')()
  }, 30_000)
})
