import { describe, expect, it } from 'vitest'
import type { VerifiedSpan } from '@/db/queries/indexer-state'
import { firstUnproven, MAX_SPANS, overlaySpans, spansThrough } from './verification-spans'

const span = (
  from: number,
  to: number,
  method: VerifiedSpan['method'],
  sampleRate: number | null = null,
) => ({
  from: BigInt(from),
  to: BigInt(to),
  method,
  sampleRate,
})

describe('verification spans', () => {
  it('merge neighbours verified the same way, and keep the others apart', () => {
    let spans = overlaySpans([], [span(0, 9, 'sampled_proof', 0.01)])
    spans = overlaySpans(spans, [span(10, 19, 'sampled_proof', 0.01), span(20, 29, 'receipts_proof')])
    expect(spans).toEqual([span(0, 19, 'sampled_proof', 0.01), span(20, 29, 'receipts_proof')])
  })

  it('relabel the blocks a later method verified again, and only those', () => {
    const spans = overlaySpans([span(0, 99, 'sampled_proof', 0.01)], [span(50, 59, 'receipts_proof')])
    expect(spans).toEqual([
      span(0, 49, 'sampled_proof', 0.01),
      span(50, 59, 'receipts_proof'),
      span(60, 99, 'sampled_proof', 0.01),
    ])
    expect(firstUnproven(spans, 99n)).toEqual(span(0, 49, 'sampled_proof', 0.01))
    expect(firstUnproven(overlaySpans(spans, [span(0, 49, 'receipts_proof')]), 99n)).toEqual(
      span(60, 99, 'sampled_proof', 0.01),
    )
    expect(firstUnproven([span(0, 9, 'receipts_proof')], 9n)).toBeUndefined()
  })

  it('forget blocks after a rollback', () => {
    expect(spansThrough([span(0, 9, 'receipts_proof'), span(10, 19, 'second_endpoint')], 12n)).toEqual([
      span(0, 9, 'receipts_proof'),
      span(10, 12, 'second_endpoint'),
    ])
  })

  it('stay few: the shortest neighbours are merged as mixed, never named after one method', () => {
    let spans: VerifiedSpan[] = []
    for (let i = 0; i < MAX_SPANS + 10; i++)
      spans = overlaySpans(spans, [
        span(i * 10, i * 10 + 9, i % 2 ? 'second_endpoint' : 'sampled_proof', 0.01),
      ])
    expect(spans.length).toBeLessThanOrEqual(MAX_SPANS)
    expect(spans[0]!.from).toBe(0n)
    expect(spans.at(-1)!.to).toBe(BigInt((MAX_SPANS + 10) * 10 - 1))
    expect(spans.some((s) => s.method === 'mixed')).toBe(true)
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.from).toBe(spans[i - 1]!.to + 1n)
  })
})
