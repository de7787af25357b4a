import fc from 'fast-check'
import { encodeAbiParameters, type Hex } from 'viem'
import { describe, expect, it } from 'vitest'
import { MAX_CONSECUTIVE_RANGE } from './consecutive'
import { decodeLog } from './decode'
import { A, B, log, word, ZERO } from './test-logs'
import {
  BATCH_METADATA_UPDATE_TOPIC,
  CONSECUTIVE_TRANSFER_TOPIC,
  CONTRACT_URI_UPDATED_TOPIC,
  METADATA_UPDATE_TOPIC,
  TRANSFER_TOPIC,
} from './topics'

describe('decodeLog', () => {
  it('decodes the standard 4-topic Transfer for any uint256 token id', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), (tokenId) => {
        const decoded = decodeLog(log([TRANSFER_TOPIC, word(A), word(B), word(tokenId)]))
        expect(decoded).toMatchObject({
          kind: 'transfers',
          events: [{ from: A, to: B, tokenId, batchIndex: 0 }],
        })
      }),
    )
  })

  it('never takes an ERC-20 Transfer (3 topics) for an NFT', () => {
    expect(decodeLog(log([TRANSFER_TOPIC, word(A), word(B)], word(10n ** 18n)))).toBeNull()
  })

  it('rejects topics that are not clean addresses', () => {
    const dirty = `0x${'ff'.repeat(12)}${A.slice(2)}` as Hex
    expect(decodeLog(log([TRANSFER_TOPIC, dirty, word(B), word(1n)]))).toBeNull()
  })

  it('offers the 1-topic, 96-byte legacy Transfer for classification', () => {
    const data = encodeAbiParameters(
      [{ type: 'address' }, { type: 'address' }, { type: 'uint256' }],
      [ZERO, B, 7n],
    )
    expect(decodeLog(log([TRANSFER_TOPIC], data))).toMatchObject({
      kind: 'legacy-transfer',
      event: { from: ZERO, to: B, tokenId: 7n, standard: 'ERC721_LEGACY' },
    })
    expect(decodeLog(log([TRANSFER_TOPIC], `${data}00` as Hex))).toBeNull()
  })

  it('expands an ERC-2309 range into one event per token, batch_index = offset', () => {
    const decoded = decodeLog(log([CONSECUTIVE_TRANSFER_TOPIC, word(5n), word(ZERO), word(B)], word(9n)))
    expect(decoded?.kind).toBe('transfers')
    const events = decoded?.kind === 'transfers' ? decoded.events : []
    expect(events.map((e) => [e.tokenId, e.batchIndex, e.logIndex])).toEqual([
      [5n, 0, 3],
      [6n, 1, 3],
      [7n, 2, 3],
      [8n, 3, 3],
      [9n, 4, 3],
    ])
    expect(decodeLog(log([CONSECUTIVE_TRANSFER_TOPIC, word(9n), word(ZERO), word(B)], word(5n)))).toBeNull()
    const huge = decodeLog(
      log([CONSECUTIVE_TRANSFER_TOPIC, word(0n), word(ZERO), word(B)], word(MAX_CONSECUTIVE_RANGE)),
    )
    expect(huge).toBeNull()
  })

  it('decodes ERC-4906 updates', () => {
    expect(decodeLog(log([METADATA_UPDATE_TOPIC], word(42n)))).toMatchObject({
      kind: 'metadata-update',
      event: { fromTokenId: 42n, toTokenId: 42n },
    })
    expect(
      decodeLog(log([BATCH_METADATA_UPDATE_TOPIC], `${word(0n)}${word(2n ** 256n - 1n).slice(2)}` as Hex)),
    ).toMatchObject({
      kind: 'metadata-update',
      event: { fromTokenId: 0n, toTokenId: 2n ** 256n - 1n },
    })
  })

  it('decodes ERC-7572 ContractURIUpdated as an update of the collection itself', () => {
    expect(decodeLog(log([CONTRACT_URI_UPDATED_TOPIC]))).toMatchObject({
      kind: 'metadata-update',
      event: { collection: '0x5fbdb2315678afecb367f032d93f642f64180aa3', contract: true },
    })
    // Another shape under the same name (arguments) is not the standard's event.
    expect(decodeLog(log([CONTRACT_URI_UPDATED_TOPIC], word(1n)))).toBeNull()
    expect(decodeLog(log([CONTRACT_URI_UPDATED_TOPIC, word(1n)]))).toBeNull()
  })

  it('lowercases addresses and hashes', () => {
    const decoded = decodeLog(log([TRANSFER_TOPIC, word(A), word(B), word(1n)]))
    expect(decoded).toMatchObject({ events: [{ collection: '0x5fbdb2315678afecb367f032d93f642f64180aa3' }] })
  })
})
