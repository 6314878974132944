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
 * The rule is the catalogue target's `imageTokens` (its own, else its provider's in the manifest); a
 * target with none (a provider added without one) is held by the largest rule, so a hold never falls
 * short on a guess. An upstream that counts more than this reserved is still billed exactly
 * (billing/settle.ts logs it).
 */
import type { CatalogueTarget } from '../catalogue/catalogue';
import { parseDataUrl } from '../openai/data-url';
import type { ImageTokenRule } from '../providers/manifest';

/** The media of one request: images (with detail and, when known, pixel size) and files (bytes, pages). */
export interface MediaParts {
  images: Array<{ detail: 'low' | 'high' | 'auto'; width?: number; height?: number }>;
  files: Array<{ pages?: number; bytes: number }>;
}

type Image = MediaParts['images'][number];
type File = MediaParts['files'][number];

const OPENAI_PAGE_TEXT = 3_000;
const BYTES_PER_PAGE_GUESS = 2_000;
const GEMINI_TILE = 258;

/** OpenAI's tiles: `detail: low` is the base alone, else base + per tile × at most 8 tiles. */
function tiles(base: number, perTile: number): (image: Image) => number {
  return (image) => (image.detail === 'low' ? base : base + perTile * 8);
}

/** Gemini: 258 per image up to 384 × 384 px, else per 768 × 768 tile; 16 tiles when the size is unknown. */
function geminiImage({ width, height }: Image): number {
  if (width === undefined || height === undefined) return GEMINI_TILE * 16;
  if (width <= 384 && height <= 384) return GEMINI_TILE;
  return GEMINI_TILE * Math.ceil(width / 768) * Math.ceil(height / 768);
}

/** Each rule: most tokens of one image, of one PDF page, and the most pages of one file. */
const RULES: Readonly<Record<ImageTokenRule, { image: (image: Image) => number; page: number; maxPages: number }>> = {
  'openai-tiles': { image: tiles(85, 170), page: OPENAI_PAGE_TEXT + 85 + 170 * 8, maxPages: 100 },
  'openai-mini-tiles': { image: tiles(2_833, 5_667), page: OPENAI_PAGE_TEXT + 2_833 + 5_667 * 8, maxPages: 100 },
  'claude-pixels': { image: () => 1_600, page: 4_800, maxPages: 100 },
  'gemini-tiles': { image: geminiImage, page: GEMINI_TILE, maxPages: 1_000 },
};

const ALL_RULES = Object.values(RULES);

/** Most tokens one image can cost on `target` (no rule: the largest any rule gives). */
export function imageTokenBound(target: CatalogueTarget, image: Image): number {
  const rule = target.imageTokens;
  return rule !== undefined ? RULES[rule].image(image) : Math.max(...ALL_RULES.map((r) => r.image(image)));
}

/** Most tokens one PDF file can cost on `target` (no rule: the largest page cost and page limit). */
export function fileTokenBound(target: CatalogueTarget, file: File): number {
  const rule = target.imageTokens;
  const page = rule !== undefined ? RULES[rule].page : Math.max(...ALL_RULES.map((r) => r.page));
  const maxPages = rule !== undefined ? RULES[rule].maxPages : Math.max(...ALL_RULES.map((r) => r.maxPages));
  return page * Math.min(maxPages, Math.max(1, file.pages ?? Math.ceil(file.bytes / BYTES_PER_PAGE_GUESS)));
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
