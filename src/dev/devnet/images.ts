/**
 * Artwork for the HTTP-metadata collection, drawn on request so nothing is fetched from the
 * internet: the same postcard as SVG or PNG. PNGs are encoded here (zlib + CRC) to avoid an
 * image library for a demo.
 */
import { crc32, deflateSync } from 'node:zlib'

const PLACES = ['Harbour', 'Desert', 'Glacier', 'Forest', 'Canyon', 'Lagoon', 'Steppe', 'Archipelago']
const STAMPS = ['Comet', 'Lighthouse', 'Owl', 'Anchor', 'Fern', 'Kite']

export type PostcardTraits = { place: string; stamp: string; hue: number; revision: number }

/** Deterministic traits: the same token and revision always look the same. */
export function postcardTraits(tokenId: bigint, revision: number): PostcardTraits {
  const mixed = tokenId * 2654435761n + BigInt(revision) * 40503n
  return {
    place: PLACES[Number(tokenId % BigInt(PLACES.length))]!,
    stamp: STAMPS[Number((tokenId / 7n) % BigInt(STAMPS.length))]!,
    hue: Number(mixed % 360n),
    revision,
  }
}

export function postcardSvg(label: string, traits: PostcardTraits): string {
  const { hue } = traits
  const sky = hsl(hue, 70, 72)
  const ground = hsl((hue + 140) % 360, 45, 35)
  return [
    '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="260" viewBox="0 0 400 260">',
    `<rect width="400" height="260" fill="${sky}"/>`,
    `<circle cx="300" cy="80" r="36" fill="${hsl((hue + 40) % 360, 90, 60)}"/>`,
    `<polygon points="0,260 0,170 90,100 170,180 250,120 400,200 400,260" fill="${ground}"/>`,
    '<rect x="16" y="16" width="56" height="68" fill="white" stroke="#333" stroke-dasharray="4 3"/>',
    `<text x="44" y="56" font-family="serif" font-size="12" text-anchor="middle">${escapeXml(traits.stamp)}</text>`,
    `<text x="200" y="240" font-family="sans-serif" font-size="20" fill="white" text-anchor="middle">`,
    `${escapeXml(label)} · ${escapeXml(traits.place)}</text>`,
    '</svg>',
  ].join('')
}

/** The postcard with its sun rising and setting (SVG animation, no script): the devnet's animated token. */
export function postcardAnimationSvg(label: string, traits: PostcardTraits): string {
  return postcardSvg(label, traits).replace(
    /<circle cx="300" cy="80" r="36" fill="([^"]+)"\/>/,
    '<circle cx="300" cy="80" r="36" fill="$1">' +
      '<animate attributeName="cy" values="200;60;200" dur="6s" repeatCount="indefinite"/></circle>',
  )
}

export function postcardPng(traits: PostcardTraits): Buffer {
  const width = 200
  const height = 130
  const sky = hslToRgb(traits.hue, 70, 72)
  const sun = hslToRgb((traits.hue + 40) % 360, 90, 60)
  const ground = hslToRgb((traits.hue + 140) % 360, 45, 35)
  const pixels = Buffer.alloc(width * height * 3)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // A ridge line made of two slopes, a sun disk and a white stamp in the corner.
      const ridge = 85 - Math.abs(((x * 1.3) % 80) - 40) * 0.6
      const inSun = (x - 150) ** 2 + (y - 40) ** 2 < 18 ** 2
      const inStamp = x >= 8 && x < 36 && y >= 8 && y < 42
      const color = inStamp ? [255, 255, 255] : y > ridge ? ground : inSun ? sun : sky
      pixels.set(color, (y * width + x) * 3)
    }
  }
  return encodePng(width, height, pixels)
}

/** Minimal PNG: 8-bit RGB, no filtering, one IDAT chunk. */
export function encodePng(width: number, height: number, rgb: Buffer): Buffer {
  const rowLength = width * 3
  const raw = Buffer.alloc((rowLength + 1) * height)
  for (let y = 0; y < height; y++) {
    raw[y * (rowLength + 1)] = 0 // filter type "None"
    rgb.copy(raw, y * (rowLength + 1) + 1, y * rowLength, (y + 1) * rowLength)
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8) // bit depth 8, colour type RGB, default compression/filter/interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

function pngChunk(type: string, data: Buffer): Buffer {
  const typeAndData = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const chunk = Buffer.alloc(typeAndData.length + 8)
  chunk.writeUInt32BE(data.length, 0)
  typeAndData.copy(chunk, 4)
  chunk.writeUInt32BE(crc32(typeAndData), typeAndData.length + 4)
  return chunk
}

function hsl(h: number, s: number, l: number): string {
  return `hsl(${h},${s}%,${l}%)`
}

function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const sat = s / 100
  const light = l / 100
  const k = (n: number) => (n + h / 30) % 12
  const a = sat * Math.min(light, 1 - light)
  const f = (n: number) => light - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1))
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)]
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
