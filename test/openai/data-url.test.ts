import { describe, expect, it } from 'vitest';
import { parseDataUrl } from '../../functions/shared/openai/data-url';

describe('parseDataUrl (RFC 2397)', () => {
  it('splits media type, base64 flag and payload', () => {
    expect(parseDataUrl('data:image/PNG;base64,iVBORw0KGgo=')).toEqual({ mediaType: 'image/png', base64: true, payload: 'iVBORw0KGgo=' });
    expect(parseDataUrl('data:text/plain;charset=utf-8,hello%20world')).toEqual({ mediaType: 'text/plain', base64: false, payload: 'hello%20world' });
    expect(parseDataUrl('DATA:;BASE64,AAAA')).toEqual({ mediaType: '', base64: true, payload: 'AAAA' });
  });

  it('keeps commas of the payload and refuses what is not a data URL', () => {
    expect(parseDataUrl('data:text/plain,a,b')?.payload).toBe('a,b');
    expect(parseDataUrl('data:image/png;base64')).toBeUndefined();
    expect(parseDataUrl('https://example.com/a.png')).toBeUndefined();
  });
});
