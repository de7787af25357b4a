import { describe, expect, it } from 'vitest'
import { FetchFailure } from './outcome'
import { resolveUri } from './resolve-uri'

const gateways = { ipfs: 'https://gw.example/ipfs/', arweave: 'https://ar.example/' }
const resolve = (uri: string, max?: number) => resolveUri(uri, gateways, max)
const outcomeOf = (uri: string, max?: number) => {
  try {
    resolve(uri, max)
    return 'resolved'
  } catch (err) {
    return err instanceof FetchFailure ? err.outcome : 'threw'
  }
}
const text = (uri: string) => {
  const r = resolve(uri)
  if (r.kind !== 'inline') throw new Error('expected inline')
  return [r.declaredType, r.bytes.toString('utf8')]
}

describe('resolveUri', () => {
  it('maps ipfs:// (also ipfs://ipfs/ and bare CIDs) through IPFS_GATEWAY', () => {
    const cid = 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG'
    expect(resolve(`ipfs://${cid}/1.json`)).toEqual({
      kind: 'fetch',
      url: `https://gw.example/ipfs/${cid}/1.json`,
      viaGateway: true,
    })
    expect(resolve(`ipfs://ipfs/${cid}`)).toMatchObject({ url: `https://gw.example/ipfs/${cid}` })
    expect(resolve(cid)).toMatchObject({ url: `https://gw.example/ipfs/${cid}` })
    const v1 = 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi'
    expect(resolve(`  ipfs://${v1}  `)).toMatchObject({ url: `https://gw.example/ipfs/${v1}` })
  })

  it('maps ar:// through ARWEAVE_GATEWAY', () => {
    const tx = 'bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U'
    expect(resolve(`ar://${tx}`)).toEqual({
      kind: 'fetch',
      url: `https://ar.example/${tx}`,
      viaGateway: true,
    })
    expect(outcomeOf('ar://short')).toBe('invalid_uri')
  })

  it('keeps http(s) URLs as they are', () => {
    expect(resolve('https://meta.example/1')).toEqual({
      kind: 'fetch',
      url: 'https://meta.example/1',
      viaGateway: false,
    })
    expect(resolve('HTTP://Meta.Example/A')).toMatchObject({ url: 'http://meta.example/A' })
  })

  it('decodes data: URIs, base64 and plain, JSON and SVG', () => {
    const json = '{"name":"x"}'
    expect(text(`data:application/json;base64,${Buffer.from(json).toString('base64')}`)).toEqual([
      'application/json',
      json,
    ])
    expect(text(`data:application/json;utf8,${json}`)).toEqual(['application/json', json])
    expect(text(`data:application/json,${encodeURIComponent(json)}`)).toEqual(['application/json', json])
    expect(text('data:application/json,{"pct":"100%"}')).toEqual(['application/json', '{"pct":"100%"}'])
    expect(text('data:image/svg+xml;charset=utf-8,<svg/>')).toEqual(['image/svg+xml', '<svg/>'])
    expect(text('data:,hello')).toEqual(['text/plain', 'hello'])
  })

  it('names the failures', () => {
    expect(outcomeOf('')).toBe('invalid_uri')
    expect(outcomeOf('file:///etc/passwd')).toBe('invalid_uri')
    expect(outcomeOf('javascript:alert(1)')).toBe('invalid_uri')
    expect(outcomeOf('ipfs://')).toBe('invalid_uri')
    expect(outcomeOf('data:application/json;base64')).toBe('invalid_uri')
    expect(outcomeOf('data:application/json;base64,@@@')).toBe('invalid_uri')
    expect(outcomeOf(`data:application/json;base64,${'A'.repeat(2000)}`, 1000)).toBe('too_large')
    expect(outcomeOf('https://[bad')).toBe('invalid_uri')
  })
})
