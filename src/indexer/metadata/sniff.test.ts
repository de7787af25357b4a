import { describe, expect, it } from 'vitest'
import { PNG_1x1 } from '../test/http-server'
import { isStorableMedia, sniffAnimationType, sniffMediaType } from './sniff'

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))))

describe('sniffMediaType', () => {
  it.each([
    ['PNG', PNG_1x1, 'image/png'],
    ['JPEG', bytes([0xff, 0xd8, 0xff, 0xe0], 'JFIF'), 'image/jpeg'],
    ['GIF', bytes('GIF89a', [1, 0, 1, 0]), 'image/gif'],
    ['WebP', bytes('RIFF', [0, 0, 0, 0], 'WEBPVP8 '), 'image/webp'],
    ['AVIF', bytes([0, 0, 0, 0x1c], 'ftypavif', [0, 0, 0, 0]), 'image/avif'],
    ['MP4', bytes([0, 0, 0, 0x18], 'ftypisom', [0, 0, 2, 0]), 'video/mp4'],
    ['QuickTime', bytes([0, 0, 0, 0x14], 'ftypqt  '), 'video/quicktime'],
    [
      'WebM',
      bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01], 'B\u0082\u0084webm'),
      'video/webm',
    ],
    ['Matroska', bytes([0x1a, 0x45, 0xdf, 0xa3], 'B\u0082\u0088matroska'), 'video/x-matroska'],
    ['MP3 with ID3', bytes('ID3', [4, 0, 0]), 'audio/mpeg'],
    ['MP3 frame', bytes([0xff, 0xfb, 0x90, 0x64]), 'audio/mpeg'],
    ['WAV', bytes('RIFF', [0, 0, 0, 0], 'WAVEfmt '), 'audio/wav'],
    ['Ogg', bytes('OggS', [0, 2], 'vorbis'), 'audio/ogg'],
    ['FLAC', bytes('fLaC'), 'audio/flac'],
    ['glTF binary', bytes('glTF', [2, 0, 0, 0]), 'model/gltf-binary'],
    ['SVG', bytes('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/svg+xml'],
    [
      'SVG with XML prolog and BOM',
      bytes([0xef, 0xbb, 0xbf], '<?xml version="1.0"?>\n<svg/>'),
      'image/svg+xml',
    ],
    ['HTML', bytes('  <!DOCTYPE html><html></html>'), 'text/html'],
    ['HTML after a comment', bytes('<!-- generated -->\n<html><body></body></html>'), 'text/html'],
    ['HTML fragment with a canvas', bytes('<canvas id="c"></canvas><script>draw()</script>'), 'text/html'],
    ['QuickTime without ftyp', bytes([0, 0, 0, 0x6c], 'moov', [0, 0, 0, 0x6c], 'mvhd'), 'video/quicktime'],
    ['JSON', bytes('\n {"name":"x"}'), 'application/json'],
    ['text', bytes('just words'), 'text/plain'],
    ['unknown binary', bytes([0, 1, 2, 3, 4, 5]), 'application/octet-stream'],
    ['empty', bytes(), 'application/octet-stream'],
  ])('recognises %s', (_name, data, type) => {
    expect(sniffMediaType(data)).toBe(type)
  })

  it('ignores what a server would claim: only the bytes count', () => {
    expect(sniffMediaType(bytes('<html><script>alert(1)</script>'))).toBe('text/html')
  })

  it('stores media, not documents or unknown bytes', () => {
    expect(
      ['image/png', 'video/mp4', 'audio/ogg', 'image/svg+xml', 'text/html', 'model/gltf-binary'].every(
        isStorableMedia,
      ),
    ).toBe(true)
    expect(['application/json', 'text/plain', 'application/octet-stream'].some(isStorableMedia)).toBe(false)
  })

  it('reads a JSON glTF model as a model only where an animation is read', () => {
    const gltf = bytes('{"asset":{"version":"2.0","generator":"x"},"scenes":[{"nodes":[0]}]}')
    expect(sniffAnimationType(gltf)).toBe('model/gltf+json')
    expect(isStorableMedia(sniffAnimationType(gltf))).toBe(true)
    // A metadata document is JSON: never a model there.
    expect(sniffMediaType(gltf)).toBe('application/json')
    expect(sniffAnimationType(bytes('{"name":"x","asset":"y"}'))).toBe('application/json')
    expect(sniffAnimationType(bytes('{"asset":'))).toBe('application/json')
    expect(sniffAnimationType(bytes([0x1a, 0x45, 0xdf, 0xa3], 'B\u0082\u0084webm'))).toBe('video/webm')
  })
})
