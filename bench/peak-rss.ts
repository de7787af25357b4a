/** Samples a child process's peak resident memory (VmHWM, Linux) until stopped. */
import { readFileSync } from 'node:fs'

export function trackPeakRss(pid: number, everyMs = 200): { peakKb(): number; stop(): void } {
  let peakKb = 0
  const timer = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0))
    } catch {
      // The process is gone.
    }
  }, everyMs)
  return { peakKb: () => peakKb, stop: () => clearInterval(timer) }
}
