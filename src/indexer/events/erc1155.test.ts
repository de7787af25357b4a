import fc from 'fast-check'
import { encodeAbiParameters, type Hex } from 'viem'
import { describe, expect, it } from 'vitest'
import { decodeLog } from './decode'
import { MAX_URI_EVENT_BYTES } from './erc1155'
import { A, B, log, word } from './test-logs'
import { TRANSFER_BATCH_TOPIC, TRANSFER_SINGLE_TOPIC, URI_TOPIC } from './topics'

const OPERATOR = '0x00000000000000000000000000000000000000cc'
const uint = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n })

const batchData = (ids: bigint[], values: bigint[]) =>
  encodeAbiParameters([{ type: 'uint256[]' }, { type: 'uint256[]' }], [ids, values])

describe('ERC-1155 events', () => {
  it('decodes TransferSingle into one id/value pair at batch position 0', () => {
    fc.assert(
      fc.property(uint, uint, (id, value) => {
        const data = encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [id, value])
        expect(decodeLog(log([TRANSFER_SINGLE_TOPIC, word(OPERATOR), word(A), word(B)], data))).toEqual({
          kind: 'transfers',
          events: [
            expect.objectContaining({
              from: A,
              to: B,
              tokenId: id,
              amount: value,
              batchIndex: 0,
              logIndex: 3,
              standard: 'ERC1155',
            }),
          ],
        })
      }),
    )
  })

  it('decodes TransferBatch into one event per pair, batch_index = position', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(uint, uint), { maxLength: 30 }), (pairs) => {
        const decoded = decodeLog(
          log(
            [TRANSFER_BATCH_TOPIC, word(OPERATOR), word(A), word(B)],
            batchData(
              pairs.map(([id]) => id),
              pairs.map(([, v]) => v),
            ),
          ),
        )
        expect(decoded?.kind).toBe('transfers')
        const events = decoded?.kind === 'transfers' ? decoded.events : []
        expect(events.map((e) => [e.tokenId, e.amount, e.batchIndex])).toEqual(
          pairs.map(([id, v], i) => [id, v, i]),
        )
      }),
    )
  })

  it('skips malformed batches: lengths that differ, offsets or lengths outside the data', () => {
    const topics = [TRANSFER_BATCH_TOPIC, word(OPERATOR), word(A), word(B)]
    expect(decodeLog(log(topics, batchData([1n, 2n], [5n])))).toBeNull()
    const good = batchData([1n, 2n], [5n, 6n])
    // The ids' offset pointing past the end.
    expect(decodeLog(log(topics, `0x${word(10_000n).slice(2)}${good.slice(66)}` as Hex))).toBeNull()
    // A length larger than the data holds.
    const words = good.slice(2).match(/.{64}/g)!
    words[2] = word(1_000_000n).slice(2)
    expect(decodeLog(log(topics, `0x${words.join('')}` as Hex))).toBeNull()
    // An offset that is not a multiple of 32.
    words[2] = word(2n).slice(2)
    words[0] = word(65n).slice(2)
    expect(decodeLog(log(topics, `0x${words.join('')}` as Hex))).toBeNull()
    expect(decodeLog(log(topics, '0x'))).toBeNull()
  })

  it('never reads an ERC-1155 event with a dirty address topic', () => {
    const dirty = `0x${'ff'.repeat(12)}${A.slice(2)}` as Hex
    const data = encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [1n, 1n])
    expect(decodeLog(log([TRANSFER_SINGLE_TOPIC, word(OPERATOR), dirty, word(B)], data))).toBeNull()
  })

  it('decodes URI into a metadata update of the one token, carrying the value', () => {
    const data = encodeAbiParameters([{ type: 'string' }], ['ipfs://bafy/{id}.json'])
    expect(decodeLog(log([URI_TOPIC, word(42n)], data))).toEqual({
      kind: 'metadata-update',
      event: {
        collection: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
        blockNumber: 16n,
        fromTokenId: 42n,
        toTokenId: 42n,
        uri: { value: 'ipfs://bafy/{id}.json', logIndex: 3, transactionHash: `0x${'cd'.repeat(32)}` },
      },
    })
  })

  it('skips a URI event that does not decode, is larger than the cap or holds a NUL', () => {
    expect(decodeLog(log([URI_TOPIC, word(1n)], '0x1234'))).toBeNull()
    const huge = encodeAbiParameters([{ type: 'string' }], ['x'.repeat(MAX_URI_EVENT_BYTES + 100)])
    expect(decodeLog(log([URI_TOPIC, word(1n)], huge))).toBeNull()
    // PostgreSQL text cannot hold it: stored, it failed its block's commit on every retry.
    const nul = encodeAbiParameters([{ type: 'string' }], ['ipfs://x\u0000'])
    expect(decodeLog(log([URI_TOPIC, word(1n)], nul))).toBeNull()
  })
})
