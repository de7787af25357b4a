import { describe, expect, it } from 'vitest'
import { curlCommand } from './curl'
import { describeLimits, mmss, plural, retryAfterSeconds } from './format'
import { splitInlineCode } from './inline-code'

describe('try page wording', () => {
  it('puts nouns in the right number', () => {
    expect(plural(1, 'request')).toBe('1 request')
    expect(plural(0, 'request')).toBe('0 requests')
    expect(plural(2, 'minute')).toBe('2 minutes')
  })

  it('describes the demo limits with correct plurals', () => {
    expect(describeLimits({ requests_per_second: 1, requests_per_minute: 30, concurrent: 2 })).toBe(
      'at most 1 request per second, 30 per minute and 2 at a time',
    )
    expect(describeLimits({ requests_per_second: 5, requests_per_minute: 300, concurrent: 10 })).toBe(
      'at most 5 requests per second, 300 per minute and 10 at a time',
    )
  })

  it('formats countdowns and reads Retry-After in both forms', () => {
    expect(mmss(61_001)).toBe('1:02')
    expect(retryAfterSeconds([['Retry-After', '3']])).toBe(3)
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(retryAfterSeconds([['retry-after', 'Thu, 01 Jan 2026 00:00:10 GMT']], now)).toBe(10)
    expect(retryAfterSeconds([['x-other', '1']])).toBeNull()
  })

  it('splits descriptions into text and code spans, with no backticks left', () => {
    expect(splitInlineCode('copied from `next_page_params`; with `before_id`.')).toEqual([
      { code: false, text: 'copied from ' },
      { code: true, text: 'next_page_params' },
      { code: false, text: '; with ' },
      { code: true, text: 'before_id' },
      { code: false, text: '.' },
    ])
    expect(splitInlineCode('no code here')).toEqual([{ code: false, text: 'no code here' }])
  })

  it('quotes the URL and the header for a shell', () => {
    expect(curlCommand('HEAD', "http://x/v1/collections?search=it's", undefined)).toBe(
      `curl -I 'http://x/v1/collections?search=it'\\''s' \\\n  -H 'Authorization: Bearer $NFT_API_KEY'`,
    )
  })
})
