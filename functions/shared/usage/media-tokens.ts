/**
 * Upper bounds on the prompt tokens of image and file (PDF) content parts, per target, for holds
 * (billing/hold-demand.ts). The upstream counts these itself and reports them in its usage; the hold
 * only has to reserve at least that much. Rates, from each provider's vision / PDF documentation:
 * - OpenAI GPT-4o: `detail: low` 85 tokens; high/auto: 85 + 170 per 512 px tile after scaling to fit
 *   2048 × 2048 and a 768 px shortest side, so at most 8 tiles = 1,445. gpt-4o-mini bills images at
 *   2,833 + 5,667 per tile (the same dollar cost at its lower price), at most 48,169.
 * - Anthropic Claude: width × height / 750 after resizing to at most ~1.15 megapixels: ≤ 1,600.
 * - Gemini: 258 tokens per image up to 384 × 384 px, else 258 per 768 × 768 tile; the size is read
 *   from the image header (PNG, GIF, WebP, JPEG) of the data URL, else 16 tiles are assumed.
 * - PDF files: pages × per-page tokens: Claude ~1,500–3,000 text tokens plus a page image (4,800 held);
 *   OpenAI extracted text plus a page image (3,000 + the image bound); Gemini 258 per page. Pages are
 *   read from the PDF's `/Count`, else one per 2 KB, at most 100 (OpenAI's and Anthropic's per-file
 *   page limit; 1,000 for Gemini).
 * An upstream that counts more than this reserved is still billed exactly (billing/settle.ts logs it).
 */
import type { CatalogueTarget } from '../catalogue/catalogue';
import { parseDataUrl } from '../openai/data-url';

/** The media of one request: images (with detail and, when known, pixel size) and files (bytes, pages). */
export interface MediaParts {
  images: Array<{ detail: 'low' | 'high' | 'auto'; width?: number; height?: number }>;
  files: Array<{ pages?: number; bytes: number }>;
}

const OPENAI_TILE = { base: 85, perTile: 170, maxTiles: 8 };
const OPENAI_MINI_TILE = { base: 2_833, perTile: 5_667, maxTiles: 8 };
const CLAUDE_IMAGE_MAX = 1_600;
const GEMINI_TILE = 258;
const GEMINI_DEFAULT_TILES = 16;
const CLAUDE_PAGE = 4_800;
const OPENAI_PAGE_TEXT = 3_000;
const BYTES_PER_PAGE_GUESS = 2_000;

/** Most tokens one image can cost on `target`. */
export function imageTokenBound(target: CatalogueTarget, image: MediaParts['images'][number]): number {
  switch (target.provider) {
    case 'anthropic':
      return CLAUDE_IMAGE_MAX;
    case 'gemini': {
      const { width, height } = image;
      if (width === undefined || height === undefined) return GEMINI_TILE * GEMINI_DEFAULT_TILES;
      if (width <= 384 && height <= 384) return GEMINI_TILE;
      return GEMINI_TILE * Math.ceil(width / 768) * Math.ceil(height / 768);
    }
    default: {
      const t = target.upstreamModel.includes('mini') ? OPENAI_MINI_TILE : OPENAI_TILE;
      return image.detail === 'low' ? t.base : t.base + t.perTile * t.maxTiles;
    }
  }
}

/** Most tokens one PDF file can cost on `target`. */
export function fileTokenBound(target: CatalogueTarget, file: MediaParts['files'][number]): number {
  const maxPages = target.provider === 'gemini' ? 1_000 : 100;
  const pages = Math.min(maxPages, Math.max(1, file.pages ?? Math.ceil(file.bytes / BYTES_PER_PAGE_GUESS)));
  switch (target.provider) {
    case 'anthropic':
      return pages * CLAUDE_PAGE;
    case 'gemini':
      return pages * GEMINI_TILE;
    default:
      return pages * (OPENAI_PAGE_TEXT + imageTokenBound(target, { detail: 'high' }));
  }
}

/** Most tokens all media of a request can cost on `target`. */
export function mediaTokenBound(target: CatalogueTarget, media: MediaParts): number {
  let total = 0;
  for (const image of media.images) total += imageTokenBound(target, image);
  for (const file of media.files) total += fileTokenBound(target, file);
  return total;
}

/**
 * Pixel size from the first bytes of an image (PNG IHDR, GIF logical screen, WebP VP8/VP8L/VP8X,
 * JPEG SOFn), or undefined when the format is not recognised.
 */
export function imageSize(bytes: Buffer): { width: number; height: number } | undefined {
  if (bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47) return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  if (bytes.length >= 10 && bytes.toString('latin1', 0, 3) === 'GIF') return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
  if (bytes.length >= 30 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') {
    const kind = bytes.toString('latin1', 12, 16);
    if (kind === 'VP8X') return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) };
    if (kind === 'VP8L') {
      const b = bytes.readUInt32LE(21);
      return { width: 1 + (b & 0x3fff), height: 1 + ((b >> 14) & 0x3fff) };
    }
    if (kind === 'VP8 ') return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
    return undefined;
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) return jpegSize(bytes);
  return undefined;
}

function jpegSize(bytes: Buffer): { width: number; height: number } | undefined {
  let i = 2;
  while (i + 9 < bytes.length) {
    if (bytes[i] !== 0xff) return undefined;
    const marker = bytes[i + 1] ?? 0;
    const length = bytes.readUInt16BE(i + 2);
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: bytes.readUInt16BE(i + 5), width: bytes.readUInt16BE(i + 7) };
    }
    i += 2 + length;
  }
  return undefined;
}

/** Page count of a PDF from its page tree (`/Count n`, the largest), or undefined when not visible. */
export function pdfPageCount(bytes: Buffer): number | undefined {
  const text = bytes.toString('latin1');
  let max: number | undefined;
  for (const m of text.matchAll(/\/Count\s+(\d{1,6})/g)) {
    const n = Number(m[1]);
    if (max === undefined || n > max) max = n;
  }
  return max;
}

/** The bytes of a `data:` URL (base64 or percent-encoded), or undefined for any other URL. */
export function dataUrlBytes(url: string, maxBytes = Number.POSITIVE_INFINITY): Buffer | undefined {
  const parsed = parseDataUrl(url);
  if (parsed === undefined) return undefined;
  const { payload } = parsed;
  if (parsed.base64) {
    // Only the head is needed for a size; 4 base64 chars per 3 bytes.
    const head = Number.isFinite(maxBytes) ? payload.slice(0, Math.ceil(maxBytes / 3) * 4) : payload;
    return Buffer.from(head, 'base64');
  }
  try {
    return Buffer.from(decodeURIComponent(payload), 'latin1');
  } catch {
    return undefined;
  }
}
