/**
 * Which method verified which blocks (docs/indexer.md, "Verification"), kept
 * in indexer_state.verification_spans as contiguous spans, so that the status
 * never names a method for blocks it was not applied to.
 */
import type { VerifiedSpan } from '@/db/queries/indexer-state'

/** Spans kept at most; beyond, the two shortest neighbours are merged as `mixed`. */
export const MAX_SPANS = 64

/** `added` spans laid over `spans` (they replace whatever covered their blocks), neighbours of one method merged. */
export function overlaySpans(spans: VerifiedSpan[], added: VerifiedSpan[]): VerifiedSpan[] {
  let out = spans
  for (const span of added) {
    const kept: VerifiedSpan[] = []
    for (const s of out) {
      if (s.to < span.from || s.from > span.to) kept.push(s)
      else {
        if (s.from < span.from) kept.push({ ...s, to: span.from - 1n })
        if (s.to > span.to) kept.push({ ...s, from: span.to + 1n })
      }
    }
    kept.push(span)
    out = kept
  }
  return capped(merged(out.sort((a, b) => (a.from < b.from ? -1 : 1))))
}

/** The spans up to `block` (a rollback forgets everything after it). */
export function spansThrough(spans: VerifiedSpan[], block: bigint): VerifiedSpan[] {
  return spans.filter((s) => s.from <= block).map((s) => (s.to > block ? { ...s, to: block } : s))
}

/** The first span not proven block by block, up to `block`: what a distrusted log index put there. */
export function firstUnproven(spans: VerifiedSpan[], block: bigint): VerifiedSpan | undefined {
  return spansThrough(spans, block).find((s) => s.method !== 'receipts_proof')
}

function merged(spans: VerifiedSpan[]): VerifiedSpan[] {
  const out: VerifiedSpan[] = []
  for (const s of spans) {
    const last = out[out.length - 1]
    if (last && last.to + 1n === s.from && last.method === s.method && last.sampleRate === s.sampleRate)
      out[out.length - 1] = { ...last, to: s.to }
    else out.push(s)
  }
  return out
}

function capped(spans: VerifiedSpan[]): VerifiedSpan[] {
  const out = [...spans]
  while (out.length > MAX_SPANS) {
    let at = 0
    let shortest: bigint | null = null
    for (let i = 0; i + 1 < out.length; i++) {
      const size = out[i + 1]!.to - out[i]!.from
      if (shortest === null || size < shortest) {
        shortest = size
        at = i
      }
    }
    out.splice(at, 2, { from: out[at]!.from, to: out[at + 1]!.to, method: 'mixed', sampleRate: null })
  }
  return merged(out)
}
