// What the signing page shows of a project beyond its name: a display name, a website proven to be the project's,
// and a logo. Pure rules: normalising a website, the proof a website publishes, recognising an image. See docs/pages.md.
import { createHash, randomBytes } from 'node:crypto'
import type { FieldError } from '../../platform/errors.js'

/** Where a website publishes its proof, under its origin (RFC 8615 well-known URI). */
export const WEBSITE_PROOF_PATH = '/.well-known/countersign-verification.txt'
/** The line the proof file holds; several lines may stand in one file (several projects on one site). */
export const WEBSITE_PROOF_PREFIX = 'countersign-verification='
export const MAX_WEBSITE_URL_CHARS = 2048

/** A new proof token, made when a website is set: 128 random bits. */
export function newWebsiteToken(): string {
  return randomBytes(16).toString('base64url')
}

/** The proof line a website must publish for `token`. */
export function websiteProofLine(token: string): string {
  return `${WEBSITE_PROOF_PREFIX}${token}`
}

/** True when the proof file's text holds the project's line (surrounding white space and other lines ignored). */
export function proofMatches(fileText: string, token: string): boolean {
  const expected = websiteProofLine(token)
  return fileText.split(/\r?\n/).some((line) => line.trim() === expected)
}

/**
 * The website as the service keeps it: the origin of an absolute URL (scheme, host and port; a path is dropped,
 * because what a user can check is which site it is). https only, unless `allowHttp` (local development and tests:
 * WEBHOOK_ALLOW_PRIVATE_TARGETS).
 */
export function normalizeWebsite(value: string, allowHttp: boolean): { origin: string } | { error: FieldError } {
  const field = 'websiteUrl'
  const text = value.trim()
  if (text.length > MAX_WEBSITE_URL_CHARS) return { error: { field, message: `must be at most ${MAX_WEBSITE_URL_CHARS} characters` } }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { error: { field, message: 'must be an absolute URL such as https://shop.example' } }
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    return { error: { field, message: allowHttp ? 'must use https or http' : 'must use https' } }
  }
  if (url.username !== '' || url.password !== '') return { error: { field, message: 'must not contain a user name or password' } }
  return { origin: url.origin }
}

/** The origin as a person reads it: the host (and a port other than the default), without the https scheme. */
export function displayOrigin(origin: string): string {
  const url = new URL(origin)
  return url.protocol === 'https:' ? url.host : `${url.protocol}//${url.host}`
}

export const MAX_LOGO_BYTES = 100 * 1024
/**
 * The most pixels a logo may have on a side. A browser holds a picture as 4 bytes a pixel whatever its file's size,
 * and a blank PNG of 16,384 x 16,384 deflates into 33 KB: one such logo would take a gigabyte of every signing page
 * that shows it. 2,048 is four times what a 48-pixel logo needs on the densest screen, many times over.
 */
export const MAX_LOGO_SIDE = 2048
export const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const
export type LogoType = (typeof LOGO_TYPES)[number]

/**
 * The image type the bytes themselves declare (their signature), or undefined. SVG is not accepted: it can carry
 * script and links, and it is the one common logo format that is a document rather than a picture.
 */
export function sniffImageType(bytes: Uint8Array): LogoType | undefined {
  const starts = (...signature: number[]) => signature.every((byte, index) => bytes[index] === byte)
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png'
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg'
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) {
    return 'image/webp'
  }
  return undefined
}

/**
 * A logo sent as a data URL (`data:image/png;base64,...`, what a browser's FileReader gives), checked: base64, at
 * most MAX_LOGO_BYTES, bytes whose signature matches the declared type, and a size in pixels that its header gives as a decoder reads it,
 * at most MAX_LOGO_SIDE a side.
 */
export function parseLogo(dataUrl: string): { contentType: LogoType; bytes: Buffer; sha256: string } | { error: FieldError } {
  const field = 'image'
  const match = /^data:([a-z0-9.+/-]+);base64,([A-Za-z0-9+/]*={0,2})$/i.exec(dataUrl)
  if (match === null) return { error: { field, message: 'must be a base64 data URL: data:image/png;base64,...' } }
  const declared = (match[1] as string).toLowerCase()
  if (!(LOGO_TYPES as readonly string[]).includes(declared)) {
    return { error: { field, message: `must be a PNG, JPEG or WebP image, not ${declared}` } }
  }
  const bytes = Buffer.from(match[2] as string, 'base64')
  if (bytes.length === 0) return { error: { field, message: 'is empty' } }
  if (bytes.length > MAX_LOGO_BYTES)
    return { error: { field, message: `must be at most ${MAX_LOGO_BYTES / 1024} KB (this one is ${Math.ceil(bytes.length / 1024)} KB)` } }
  const actual = sniffImageType(bytes)
  if (actual === undefined) return { error: { field, message: 'is not a PNG, JPEG or WebP image' } }
  if (actual !== declared) return { error: { field, message: `is declared ${declared} but its bytes are ${actual}` } }
  const size = sizeOf(bytes, actual)
  if (size === undefined) return { error: { field, message: `is not a whole ${actual} image: its size in pixels cannot be read` } }
  if (size.width > MAX_LOGO_SIDE || size.height > MAX_LOGO_SIDE) {
    return {
      error: { field, message: `must be at most ${MAX_LOGO_SIDE} x ${MAX_LOGO_SIDE} pixels (this one is ${size.width} x ${size.height})` },
    }
  }
  return { contentType: actual, bytes, sha256: createHash('sha256').update(bytes).digest('hex') }
}

/**
 * An image's size in pixels, as a browser's decoder reads it from a well-formed file, or undefined when the file is
 * not one. Read strictly, by the formats' own rules: a lenient reader (image-size slides over a stray byte between
 * JPEG markers, where a decoder skips it) can be shown a small decoy frame while the decoder reads a large one.
 */
function sizeOf(bytes: Buffer, type: LogoType): { width: number; height: number } | undefined {
  const size = type === 'image/png' ? pngSize(bytes) : type === 'image/jpeg' ? jpegSize(bytes) : webpSize(bytes)
  return size !== undefined && size.width > 0 && size.height > 0 ? size : undefined
}

/** PNG: the IHDR chunk, which must come first. */
function pngSize(bytes: Buffer): { width: number; height: number } | undefined {
  if (bytes.length < 33 || bytes.readUInt32BE(8) !== 13 || bytes.toString('latin1', 12, 16) !== 'IHDR') return undefined
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) }
}

/** The JPEG markers that start a frame (SOF0-SOF15 but for DHT, JPG and DAC), whose header gives the size. */
const JPEG_FRAME_MARKERS = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf])
const JPEG_START_OF_SCAN = 0xda

/**
 * JPEG: the one frame header before the first scan, the segments before it read one after another, each starting
 * where the last ended. Anything else there (a stray byte, a second frame, a scan before the frame, a segment that
 * runs past the end) is not a well-formed file.
 */
function jpegSize(bytes: Buffer): { width: number; height: number } | undefined {
  let size: { width: number; height: number } | undefined
  let at = 2
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return undefined
    let marker = bytes[at + 1] as number
    // A marker may be preceded by any number of 0xFF fill bytes.
    while (marker === 0xff && at + 5 <= bytes.length) marker = bytes[++at + 1] as number
    if (marker === JPEG_START_OF_SCAN) return size
    // Markers without a segment (SOI, EOI, RSTn, TEM) have no place before the first scan.
    if (marker === 0x00 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd9)) return undefined
    const length = bytes.readUInt16BE(at + 2)
    if (length < 2 || at + 2 + length > bytes.length) return undefined
    if (JPEG_FRAME_MARKERS.has(marker)) {
      if (size !== undefined || length < 8) return undefined
      size = { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) }
    }
    at += 2 + length
  }
  return undefined
}

/** WebP: the first chunk, lossy (VP8), lossless (VP8L) or extended (VP8X, the canvas every frame must fit in). */
function webpSize(bytes: Buffer): { width: number; height: number } | undefined {
  if (bytes.length < 25) return undefined
  switch (bytes.toString('latin1', 12, 16)) {
    case 'VP8 ':
      if (bytes.length < 30 || bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return undefined
      return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff }
    case 'VP8L': {
      if (bytes[20] !== 0x2f) return undefined
      const bits = bytes.readUInt32LE(21)
      return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) }
    }
    case 'VP8X':
      if (bytes.length < 30) return undefined
      return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) }
    default:
      return undefined
  }
}

/** The public URL path of a project's logo; the hash makes each logo its own URL, cached for good. */
export function logoPath(projectId: string, sha256: string): string {
  return `/logos/${encodeURIComponent(projectId)}/${sha256}`
}
