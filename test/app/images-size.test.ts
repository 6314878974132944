import { describe, expect, it } from 'vitest';
import { MAX_BUFFERED_ANSWER_BYTES } from '../../functions/shared/app/embeddings';
import { assertImagesAnswerFits, imageItemBytes, imagesThatFit } from '../../functions/shared/app/images';
import { InvalidRequestError } from '../../functions/shared/errors/gateway-errors';

/** The 6 MB bound of an image answer, known before the call (app/images.ts). */

const SQUARE = 1024 * 1024;
const WIDE = 1536 * 1024;

describe('images that fit a buffered answer', () => {
  it('counts PNG at 2.5 bytes per pixel and lossy formats at output_compression% of a byte, base64 included', () => {
    expect(imageItemBytes(SQUARE, 'png', 100)).toBe(4 * Math.ceil((SQUARE * 2.5) / 3) + 1_024);
    expect(imageItemBytes(SQUARE, 'jpeg', 50)).toBe(4 * Math.ceil((SQUARE * 0.5) / 3) + 1_024);
    // Never below a quarter byte per pixel, however low the compression setting.
    expect(imageItemBytes(SQUARE, 'webp', 0)).toBe(imageItemBytes(SQUARE, 'webp', 25));
    expect([imagesThatFit(SQUARE, 'png', 100), imagesThatFit(WIDE, 'png', 100), imagesThatFit(SQUARE, 'jpeg', 80), imagesThatFit(SQUARE, 'jpeg', 100)]).toEqual(
      [1, 1, 5, 4],
    );
    for (const [pixels, format, c] of [
      [SQUARE, 'png', 100],
      [WIDE, 'jpeg', 80],
    ] as const) {
      const fit = imagesThatFit(pixels, format, c);
      expect(fit * imageItemBytes(pixels, format, c)).toBeLessThanOrEqual(MAX_BUFFERED_ANSWER_BYTES);
      expect((fit + 1) * imageItemBytes(pixels, format, c)).toBeGreaterThan(MAX_BUFFERED_ANSWER_BYTES - 1_024);
    }
  });

  it('refuses more than fit with a 400 naming the count and the JPEG alternative', () => {
    expect(() => assertImagesAnswerFits(1, '1024x1024', SQUARE, 'png', 100)).not.toThrow();
    let err: unknown;
    try {
      assertImagesAnswerFits(3, '1024x1024', SQUARE, 'png', 100);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, code: 'response_too_large', param: 'n' });
    expect((err as Error).message).toContain('at most 1 fit');
    expect((err as Error).message).toContain('up to 5 fit');
  });
});
