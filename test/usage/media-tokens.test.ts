import { describe, expect, it } from 'vitest';
import { CATALOGUE, type CatalogueTarget } from '../../functions/shared/catalogue/catalogue';
import { dataUrlBytes, fileTokenBound, imageSize, imageTokenBound, mediaTokenBound, pdfPageCount } from '../../functions/shared/usage/media-tokens';

/** The hold's bounds on image and PDF tokens (usage/media-tokens.ts), per provider, and the header readers behind them. */

/** A real catalogue target of `provider` serving `upstreamModel`. */
function target(provider: CatalogueTarget['provider'], upstreamModel: string): CatalogueTarget {
  const found = [...CATALOGUE.values()].flatMap((e) => e.targets).find((t) => t.provider === provider && t.upstreamModel === upstreamModel);
  if (!found) throw new Error(`no catalogue target ${provider}:${upstreamModel}`);
  return found;
}

const gpt4o = target('openai', 'gpt-4o');
const gpt4oMini = target('openai', 'gpt-4o-mini');
const claude = [...CATALOGUE.values()].flatMap((e) => e.targets).find((t) => t.provider === 'anthropic')!;
const gemini = [...CATALOGUE.values()].flatMap((e) => e.targets).find((t) => t.provider === 'gemini')!;

describe('image bounds', () => {
  it('OpenAI: 85 for detail low, 85 + 170 × 8 tiles otherwise; gpt-4o-mini at its own (larger) token rates', () => {
    expect(imageTokenBound(gpt4o, { detail: 'low' })).toBe(85);
    expect(imageTokenBound(gpt4o, { detail: 'high' })).toBe(1_445);
    expect(imageTokenBound(gpt4o, { detail: 'auto' })).toBe(1_445);
    expect(imageTokenBound(gpt4oMini, { detail: 'low' })).toBe(2_833);
    expect(imageTokenBound(gpt4oMini, { detail: 'high' })).toBe(48_169);
  });

  it('Claude: 1,600 whatever the size; Gemini: 258 up to 384 px, else 258 per 768 px tile, 16 tiles when the size is unknown', () => {
    expect(imageTokenBound(claude, { detail: 'low', width: 10, height: 10 })).toBe(1_600);
    expect(imageTokenBound(gemini, { detail: 'auto', width: 384, height: 384 })).toBe(258);
    expect(imageTokenBound(gemini, { detail: 'auto', width: 385, height: 100 })).toBe(258);
    expect(imageTokenBound(gemini, { detail: 'auto', width: 1_000, height: 800 })).toBe(258 * 2 * 2);
    expect(imageTokenBound(gemini, { detail: 'auto', width: 768, height: 1_537 })).toBe(258 * 1 * 3);
    expect(imageTokenBound(gemini, { detail: 'auto' })).toBe(258 * 16);
  });
});

describe('PDF bounds', () => {
  it('pages × the per-page rate: Claude 4,800, Gemini 258, OpenAI 3,000 + a high-detail image', () => {
    expect(fileTokenBound(claude, { pages: 3, bytes: 1 })).toBe(3 * 4_800);
    expect(fileTokenBound(gemini, { pages: 3, bytes: 1 })).toBe(3 * 258);
    expect(fileTokenBound(gpt4o, { pages: 3, bytes: 1 })).toBe(3 * (3_000 + 1_445));
  });

  it('guesses a page per 2 KB when the count is unknown, at least 1, at most 100 pages (1,000 on Gemini)', () => {
    expect(fileTokenBound(claude, { bytes: 0 })).toBe(4_800);
    expect(fileTokenBound(claude, { bytes: 4_001 })).toBe(3 * 4_800);
    expect(fileTokenBound(claude, { pages: 5_000, bytes: 1 })).toBe(100 * 4_800);
    expect(fileTokenBound(gemini, { pages: 5_000, bytes: 1 })).toBe(1_000 * 258);
    expect(fileTokenBound(gemini, { bytes: 10_000_000 })).toBe(1_000 * 258);
  });

  it('adds up every image and file of a request', () => {
    const media = { images: [{ detail: 'low' as const }, { detail: 'high' as const }], files: [{ pages: 2, bytes: 10 }] };
    expect(mediaTokenBound(gpt4o, media)).toBe(85 + 1_445 + 2 * (3_000 + 1_445));
    expect(mediaTokenBound(gpt4o, { images: [], files: [] })).toBe(0);
  });
});

describe('the rule comes from the catalogue', () => {
  it("each vision target names its rule (its own or its provider's): none falls back to the largest", () => {
    for (const t of [...CATALOGUE.values()].flatMap((e) => e.targets)) if (t.capabilities.vision) expect(t.imageTokens, t.key).toBeDefined();
  });

  it("a target with no rule (a provider added without one) is held by the largest rule, never OpenAI's by default", () => {
    const unknown: CatalogueTarget = { ...gpt4o, provider: 'deepseek', imageTokens: undefined };
    expect(imageTokenBound(unknown, { detail: 'low' })).toBe(258 * 16); // Gemini's 16 tiles for a size it cannot read
    expect(imageTokenBound(unknown, { detail: 'high', width: 4_000, height: 4_000 })).toBe(48_169);
    expect(fileTokenBound(unknown, { pages: 3, bytes: 1 })).toBe(3 * (3_000 + 48_169));
    expect(fileTokenBound(unknown, { pages: 5_000, bytes: 1 })).toBe(1_000 * (3_000 + 48_169));
  });
});

describe('reading sizes from image headers', () => {
  const png = (w: number, h: number): Buffer => {
    const b = Buffer.alloc(24);
    b.writeUInt32BE(0x89504e47, 0);
    b.write('\r\n\x1a\n', 4, 'latin1');
    b.writeUInt32BE(13, 8);
    b.write('IHDR', 12, 'latin1');
    b.writeUInt32BE(w, 16);
    b.writeUInt32BE(h, 20);
    return b;
  };
  const gif = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.from([0x20, 0x03, 0x58, 0x02])]); // 800 × 600, little-endian
  const webp = (kind: string, payload: number[]): Buffer => {
    const b = Buffer.alloc(30);
    b.write('RIFF', 0, 'latin1');
    b.write('WEBP', 8, 'latin1');
    b.write(kind, 12, 'latin1');
    Buffer.from(payload).copy(b, 20);
    return b;
  };
  // JPEG: SOI, an APP0 segment of 16 bytes, a DHT segment (C4: in the SOFn range, but no frame), then
  // SOF0 (precision, height, width).
  const jpeg = Buffer.from([
    0xff,
    0xd8,
    0xff,
    0xe0,
    0x00,
    0x10,
    ...Array<number>(14).fill(0),
    0xff,
    0xc4,
    0x00,
    0x06,
    0x09,
    0x09,
    0x09,
    0x09,
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    0x01,
    0xe0,
    0x02,
    0x80,
    0x03,
  ]);

  it('PNG, GIF, JPEG (after other segments) and the three WebP kinds', () => {
    expect(imageSize(png(1920, 1080))).toEqual({ width: 1920, height: 1080 });
    expect(imageSize(gif)).toEqual({ width: 800, height: 600 });
    expect(imageSize(jpeg)).toEqual({ width: 640, height: 480 });
    // VP8X: 24-bit width-1 and height-1 at 24 and 27.
    expect(imageSize(webp('VP8X', [0, 0, 0, 0, 0x7f, 0x07, 0x00, 0x37, 0x04, 0x00]))).toEqual({ width: 1920, height: 1080 });
    // VP8L: after the 0x2f signature at 20, 14 bits of width-1 then 14 of height-1 from byte 21.
    const vp8l = (99 & 0x3fff) | ((49 & 0x3fff) << 14);
    expect(imageSize(webp('VP8L', [0x2f, vp8l & 0xff, (vp8l >> 8) & 0xff, (vp8l >> 16) & 0xff, (vp8l >> 24) & 0xff]))).toEqual({ width: 100, height: 50 });
    // VP8 (lossy): 14-bit width and height at 26 and 28.
    expect(imageSize(webp('VP8 ', [0, 0, 0, 0, 0, 0, 0x80, 0x02, 0xe0, 0x01]))).toEqual({ width: 640, height: 480 });
  });

  it('undefined for what it cannot read: another format, a cut header, a JPEG without a frame', () => {
    expect(imageSize(Buffer.from('not an image at all, really not'))).toBeUndefined();
    expect(imageSize(png(1, 1).subarray(0, 20))).toBeUndefined();
    expect(imageSize(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0, 0, 0x00, 0x00, 0x00, 0x00]))).toBeUndefined();
  });
});

describe('PDF pages and data URLs', () => {
  it('takes the largest /Count of the page tree, undefined without one', () => {
    expect(pdfPageCount(Buffer.from('%PDF-1.7\n1 0 obj << /Type /Pages /Kids [2 0 R] /Count 3 >>\n4 0 obj << /Type /Pages /Count 12 >>', 'latin1'))).toBe(12);
    expect(pdfPageCount(Buffer.from('%PDF-1.7 no page tree here', 'latin1'))).toBeUndefined();
  });

  it('decodes base64 and percent-encoded data URLs, the head only when bounded, and nothing else', () => {
    const payload = Buffer.from('0123456789abcdef');
    const url = `data:application/pdf;base64,${payload.toString('base64')}`;
    expect(dataUrlBytes(url)).toEqual(payload);
    const head = dataUrlBytes(url, 6)!;
    expect(head.length).toBeGreaterThanOrEqual(6);
    expect(head.length).toBeLessThan(payload.length);
    expect(payload.subarray(0, head.length)).toEqual(head);
    expect(dataUrlBytes('data:text/plain,hello%20world')?.toString('latin1')).toBe('hello world');
    expect(dataUrlBytes('data:text/plain,bad%zz')).toBeUndefined();
    expect(dataUrlBytes('https://example.com/a.png')).toBeUndefined();
  });
});
