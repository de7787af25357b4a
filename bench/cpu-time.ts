/**
 * CPU seconds spent by the processes of one timed backfill (Linux /proc): the
 * indexer under test (ours or Ponder), every PostgreSQL process of the
 * server, the node (anvil) and this bench process (which also runs the
 * provider proxies). On a 2-core machine they all compete for the same
 * cores, so a rate alone does not say whose work took the time; CPU seconds
 * do, and they move less from run to run than wall time.
 *
 * Sampled every 250 ms, so that a process that exits during the run (a
 * PostgreSQL backend of a closed pool) still counts up to its last sample.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat, 100 on Linux. */
const TICKS_PER_SECOND = 100

export interface CpuSeconds {
  /** The indexer process under test and its children. */
  indexer: number
  postgres: number
  node: number
  /** This process: the bench loop and the provider proxies. */
  bench: number
}

interface ProcStat {
  comm: string
  ppid: number
  ticks: number
}

function readStat(pid: string): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const close = stat.lastIndexOf(')')
    // After "pid (comm) ": state ppid … utime (14th field) stime (15th).
    const fields = stat.slice(close + 2).split(' ')
    return {
      comm: stat.slice(stat.indexOf('(') + 1, close),
      ppid: Number(fields[1]),
      ticks: Number(fields[11]) + Number(fields[12]),
    }
  } catch {
    return undefined // Gone between the listing and the read.
  }
}

/** CPU ticks of each PostgreSQL process so far, by pid. */
export function postgresTicks(): Map<string, number> {
  const ticks = new Map<string, number>()
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    const stat = readStat(pid)
    if (stat?.comm.startsWith('postgres')) ticks.set(pid, stat.ticks)
  }
  return ticks
}

/**
 * PostgreSQL's CPU seconds between two postgresTicks(): per process, so that a backend that
 * ended in between (an idle pool connection closed) does not take its whole life off the sum.
 */
export function postgresSecondsBetween(before: Map<string, number>, after: Map<string, number>): number {
  let ticks = 0
  for (const [pid, now] of after) ticks += now - (before.get(pid) ?? 0)
  return ticks / TICKS_PER_SECOND
}

/** Busy CPU seconds of the whole machine so far, all cores (/proc/stat: all but idle and iowait). */
export function machineBusySeconds(): number {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/)
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number)
  return (user! + nice! + system! + irq! + softirq! + steal!) / TICKS_PER_SECOND
}

export function trackCpu(pids: { indexer: number; node: number }): { stop(): CpuSeconds } {
  const baseline = new Map<string, number>()
  const last = new Map<string, { group: keyof CpuSeconds; ticks: number }>()
  const benchStart = process.cpuUsage()

  const sample = (first: boolean) => {
    const stats = new Map<string, ProcStat>()
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue
      const stat = readStat(pid)
      if (stat) stats.set(pid, stat)
    }
    const isIndexer = (pid: string): boolean => {
      for (let p: string | undefined = pid, depth = 0; p && depth < 8; depth++) {
        if (Number(p) === pids.indexer) return true
        const parent: number | undefined = stats.get(p)?.ppid
        p = parent ? String(parent) : undefined
      }
      return false
    }
    for (const [pid, stat] of stats) {
      const group: keyof CpuSeconds | undefined = isIndexer(pid)
        ? 'indexer'
        : Number(pid) === pids.node
          ? 'node'
          : stat.comm.startsWith('postgres')
            ? 'postgres'
            : undefined
      if (!group) continue
      // Processes alive at the start count from there; later ones from their birth.
      if (first) baseline.set(pid, stat.ticks)
      last.set(pid, { group, ticks: stat.ticks })
    }
  }

  sample(true)
  const timer = setInterval(() => sample(false), 250)
  let result: CpuSeconds | undefined
  return {
    /** Ends the sampling; later calls return the same figures. */
    stop() {
      if (result) return result
      clearInterval(timer)
      sample(false)
      const out: CpuSeconds = { indexer: 0, postgres: 0, node: 0, bench: 0 }
      for (const [pid, { group, ticks }] of last)
        out[group] += (ticks - (baseline.get(pid) ?? 0)) / TICKS_PER_SECOND
      const bench = process.cpuUsage(benchStart)
      out.bench = (bench.user + bench.system) / 1e6
      result = out
      return out
    },
  }
}

/** `indexer 6.7, PostgreSQL 4.5, anvil 2.1, bench and proxies 1.8 CPU-s (15.1 in all, 1.5 cores busy)`. */
export function describeCpu(cpu: CpuSeconds, seconds: number, indexerName = 'indexer'): string {
  const total = cpu.indexer + cpu.postgres + cpu.node + cpu.bench
  return `${indexerName} ${cpu.indexer.toFixed(1)}, PostgreSQL ${cpu.postgres.toFixed(1)}, anvil ${cpu.node.toFixed(1)}, bench and proxies ${cpu.bench.toFixed(1)} CPU-s (${total.toFixed(1)} in all, ${(total / seconds).toFixed(2)} cores busy on average)`
}
