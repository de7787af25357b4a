/**
 * Counting instructions with valgrind's callgrind, as bench:request and bench:api do: a node
 * process started under it with instrumentation off, switched on and off around the requests
 * to count, and the events counted while it was on, read from its output file once it exits.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

/** The command that runs `node <args>` under callgrind, instrumentation off until switched on. */
export function underCallgrind(outFile: string, nodeArgs: string[]): [string, string[]] {
  return [
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${outFile}`,
      process.execPath,
      ...nodeArgs,
    ],
  ]
}

export function hasValgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Switches counting on or off in a process running under callgrind. */
export function instrument(pid: number, on: boolean): void {
  execFileSync('callgrind_control', ['-i', on ? 'on' : 'off', String(pid)], { stdio: 'ignore' })
}

/** Instructions counted while instrumentation was on (`totals`; `summary` is 0 when it was off at the exit). */
export function countedInstructions(outFile: string): number {
  const totals = /^totals:\s+(\d+)/m.exec(readFileSync(outFile, 'utf8'))
  if (!totals) throw new Error(`no callgrind totals in ${outFile}`)
  return Number(totals[1])
}
