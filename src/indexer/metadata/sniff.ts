/**
 * Media type from the first bytes (magic numbers), never from a server's
 * Content-Type. Returns application/octet-stream when nothing matches.
 */
export function sniffMediaType(bytes: Uint8Array): string {
  const b = bytes
  const ascii = (start: number, text: string) => {
    if (b.length < start + text.length) return false
    for (let i = 0; i < text.length; i++) if (b[start + i] !== text.charCodeAt(i)) return false
    return true
  }
  const startsWith = (...sig: number[]) => sig.every((v, i) => b[i] === v)

  if (startsWith(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png'
  if (startsWith(0xff, 0xd8, 0xff)) return 'image/jpeg'
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'image/gif'
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'image/webp'
  if (ascii(0, 'RIFF') && ascii(8, 'WAVE')) return 'audio/wav'
  if (ascii(0, 'RIFF') && ascii(8, 'AVI ')) return 'video/x-msvideo'
  if (ascii(4, 'ftyp')) return isoMediaType(String.fromCharCode(...b.subarray(8, 12)))
  // Older QuickTime files start with a movie atom instead of `ftyp`.
  if (['moov', 'mdat', 'wide'].some((atom) => ascii(4, atom))) return 'video/quicktime'
  if (startsWith(0x1a, 0x45, 0xdf, 0xa3))
    return includesAscii(b.subarray(0, 64), 'webm') ? 'video/webm' : 'video/x-matroska'
  if (ascii(0, 'OggS')) return includesAscii(b.subarray(0, 64), 'theora') ? 'video/ogg' : 'audio/ogg'
  if (ascii(0, 'fLaC')) return 'audio/flac'
  if (ascii(0, 'ID3') || (b.length > 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0 && (b[1]! & 0x06) !== 0)) {
    return 'audio/mpeg'
  }
  if (ascii(0, 'glTF')) return 'model/gltf-binary'
  if (ascii(0, '%PDF-')) return 'application/pdf'
  if (startsWith(0x00, 0x00, 0x01, 0x00)) return 'image/x-icon'
  if (ascii(0, 'II*\u0000') || ascii(0, 'MM\u0000*')) return 'image/tiff'
  if (ascii(0, 'BM') && b.length > 14) return 'image/bmp'
  return sniffText(b)
}

function isoMediaType(brand: string): string {
  if (brand === 'avif' || brand === 'avis') return 'image/avif'
  if (['heic', 'heix', 'hevc', 'hevx', 'mif1', 'msf1'].includes(brand)) return 'image/heic'
  if (brand === 'qt  ') return 'video/quicktime'
  if (brand === 'M4A ' || brand === 'M4B ') return 'audio/mp4'
  return 'video/mp4'
}

function includesAscii(bytes: Uint8Array, text: string): boolean {
  return Buffer.from(bytes).includes(text, 0, 'latin1')
}

/** Text formats: skip a BOM and leading whitespace, then look at the first tag or character. */
function sniffText(b: Uint8Array): string {
  let start = 0
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) start = 3
  while (
    start < b.length &&
    (b[start] === 0x20 || b[start] === 0x09 || b[start] === 0x0a || b[start] === 0x0d)
  )
    start++
  const head = Buffer.from(b.subarray(start, start + 1024))
    .toString('latin1')
    .toLowerCase()
  if (head.startsWith('<svg') || (head.startsWith('<?xml') && head.includes('<svg'))) return 'image/svg+xml'
  if (head.startsWith('<!doctype svg') || (head.startsWith('<!--') && head.includes('<svg')))
    return 'image/svg+xml'
  if (/^<(!doctype html|html|head|body|script|iframe|div|canvas|meta|title|style|p[\s>])/.test(head))
    return 'text/html'
  if (head.startsWith('<!--') && /<(!doctype html|html|head|body|script)[\s>]/.test(head)) return 'text/html'
  if (head.startsWith('{') || head.startsWith('[')) return 'application/json'
  if (b.length > 0 && isMostlyText(b.subarray(start, start + 512))) return 'text/plain'
  return 'application/octet-stream'
}

function isMostlyText(b: Uint8Array): boolean {
  let binary = 0
  for (const byte of b) if (byte < 0x09 || (byte > 0x0d && byte < 0x20)) binary++
  return binary === 0
}

/**
 * The media type of an `animation_url`'s bytes: as sniffMediaType, and a
 * JSON glTF model (`{"asset": {"version": "2.0"}, …}`) is model/gltf+json.
 * Only animations are read this way: a metadata document is JSON too.
 */
export function sniffAnimationType(bytes: Uint8Array): string {
  const type = sniffMediaType(bytes)
  if (type !== 'application/json') return type
  try {
    const doc = JSON.parse(
      Buffer.from(bytes)
        .toString('utf8')
        .replace(/^\uFEFF/, ''),
    ) as unknown
    const asset = (doc as { asset?: { version?: unknown } } | null)?.asset
    if (typeof asset?.version === 'string' && /^\d+\.\d+$/.test(asset.version)) return 'model/gltf+json'
  } catch {
    // Not JSON after all: not a model.
  }
  return type
}

/** Media kept in the media store: pictures, video, audio, 3D models, HTML and SVG. */
export function isStorableMedia(mediaType: string): boolean {
  return /^(image|video|audio|model)\//.test(mediaType) || mediaType === 'text/html'
}
