/**
 * A pid-file lock on a data folder, for what must not run twice on one DATA_DIR: the
 * embedded PostgreSQL (PGlite corrupts a directory two instances open) and the embedded
 * devnet (two anvils would overwrite each other's saved chain).
 *
 * The file names the holder: its pid and, where /proc exists, the identity of that process
 * instance (the kernel's boot id and the process's start time, /proc/<pid>/stat field 22).
 * A file left behind by a crash, `kill -9` or a reboot is taken over once its holder is gone:
 *  - no process has the pid; or
 *  - the process that has it now is another one (pids are recycled: a container restart
 *    hands out the same small pids again): its identity differs from the recorded one, or,
 *    for a file recording no identity (a bare pid: older versions, or written by hand), it
 *    started after the file was last written, so it cannot be the process that wrote it;
 *  - the file names this process but this process does not hold the lock (a previous run
 *    that had the same pid, e.g. pid 1 of a container).
 * Without /proc (macOS) a running pid is taken for the holder, as before.
 *
 * A lock is released by the function lockFolder returns, and when the process exits.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'

export class FolderInUseError extends Error {
  constructor(
    readonly folder: string,
    readonly holder: number,
    what: string,
  ) {
    super(`${what}: ${folder} is in use by process ${holder}`)
    this.name = 'FolderInUseError'
  }
}

/** Lock files this process holds, with the content it wrote. */
const held = new Map<string, string>()

/**
 * Takes `folder/fileName` for this process, or throws FolderInUseError naming the live holder
 * (another process, or this one through an earlier lockFolder). `what` starts the message.
 * Returns the release, which is idempotent and leaves a file another process took alone.
 */
export function lockFolder(folder: string, fileName: string, what: string): () => void {
  const file = path.resolve(folder, fileName)
  const content = `${process.pid}\n${identityOf(process.pid) ?? ''}\n`
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, content, { flag: 'wx' })
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw err
    }
    const seen = readLock(file)
    if (seen === undefined) continue // removed meanwhile: try again
    const holder = liveHolder(file, seen)
    if (holder !== undefined) throw new FolderInUseError(folder, holder, what)
    // Stale: removed (unless someone replaced it meanwhile), then created anew with 'wx', so of
    // two processes taking it over at once one wins and the other finds the winner.
    if (readLock(file)?.text === seen.text) rmSync(file, { force: true })
  }
  held.set(file, content)
  const onExit = () => release()
  process.once('exit', onExit)
  let released = false
  function release() {
    if (released) return
    released = true
    process.off('exit', onExit)
    held.delete(file)
    if (readLock(file)?.text === content) rmSync(file, { force: true })
  }
  return release
}

/** The pid of the live holder of `folder/fileName` (this process included), or undefined. */
export function folderLockHolder(folder: string, fileName: string): number | undefined {
  const file = path.resolve(folder, fileName)
  const seen = readLock(file)
  return seen && liveHolder(file, seen)
}

interface LockFile {
  text: string
  pid: number
  /** Recorded identity of the holder; undefined for a bare pid. */
  identity: string | undefined
  modifiedMs: number
}

function readLock(file: string): LockFile | undefined {
  try {
    const text = readFileSync(file, 'utf8')
    const [pid = '', identity = ''] = text.split('\n').map((line) => line.trim())
    return {
      text,
      pid: /^\d+$/.test(pid) ? Number(pid) : 0,
      identity: identity || undefined,
      modifiedMs: statSync(file).mtimeMs,
    }
  } catch {
    return undefined
  }
}

function liveHolder(file: string, lock: LockFile): number | undefined {
  const { pid } = lock
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined
  if (pid === process.pid) return held.get(file) === lock.text ? pid : undefined
  if (!isRunning(pid)) return undefined
  if (lock.identity !== undefined) {
    const now = identityOf(pid)
    // Unknown now (no /proc, or it just exited): a running pid is taken for the holder.
    return now === undefined || now === lock.identity ? pid : undefined
  }
  const started = startedAtMs(pid)
  return started !== undefined && started > lock.modifiedMs + START_SLACK_MS ? undefined : pid
}

/**
 * Start times are read at clock-tick precision against a boot time in whole seconds that
 * moves a little with clock adjustments; a process counts as started after the file only
 * when clearly so.
 */
const START_SLACK_MS = 10_000
/** USER_HZ, the unit of /proc/<pid>/stat times: 100 on every mainstream Linux architecture. */
const CLOCK_TICKS_PER_SECOND = 100

/** `<boot id> <start time in ticks since boot>` of the process `pid`, or undefined without /proc. */
function identityOf(pid: number): string | undefined {
  const ticks = startTicks(pid)
  if (ticks === undefined) return undefined
  let bootId = '-'
  try {
    bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || '-'
  } catch {}
  return `${bootId} ${ticks}`
}

function startTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // pid (comm) state … : comm may hold spaces and parentheses; fields resume after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = fields[22 - 3]
    return ticks !== undefined && /^\d+$/.test(ticks) ? ticks : undefined
  } catch {
    return undefined
  }
}

/** When the process `pid` started (epoch ms), or undefined without /proc. */
function startedAtMs(pid: number): number | undefined {
  const ticks = startTicks(pid)
  if (ticks === undefined) return undefined
  try {
    const bootTime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]
    if (bootTime === undefined) return undefined
    return Number(bootTime) * 1000 + (Number(ticks) * 1000) / CLOCK_TICKS_PER_SECOND
  } catch {
    return undefined
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
