import { describe, expect, it } from 'vitest';
import {
  findPreludeDelimiter,
  HTTP_INTEGRATION_CONTENT_TYPE,
  HttpResponseStream,
  parsePrelude,
  ResponseStream,
} from '../../../local/function-url/index.js';

/** A sink that records what a ResponseStream hands to the Function URL side. */
function recordingStream(): { stream: ResponseStream; bytes: () => Buffer; contentTypes: string[] } {
  const chunks: Buffer[] = [];
  const contentTypes: string[] = [];
  const stream = new ResponseStream({
    push: (chunk, contentType) => {
      chunks.push(chunk);
      contentTypes.push(contentType);
      return true;
    },
    whenWritable: (done) => done(),
    cork: () => undefined,
    uncork: () => undefined,
    finish: () => undefined,
    abort: () => undefined,
  });
  return { stream, bytes: () => Buffer.concat(chunks), contentTypes };
}

describe('HttpResponseStream.from', () => {
  it('writes JSON prelude + 8 NUL bytes just before the first write, with the integration content type', () => {
    const { stream, bytes, contentTypes } = recordingStream();
    const returned = HttpResponseStream.from(stream, { statusCode: 201, headers: { a: 'b' }, cookies: ['c=d'] });
    expect(returned).toBe(stream);
    expect(bytes().length).toBe(0); // nothing until the handler writes
    stream.write('body');
    expect(bytes()).toEqual(
      Buffer.concat([Buffer.from('{"statusCode":201,"headers":{"a":"b"},"cookies":["c=d"]}'), Buffer.alloc(8), Buffer.from('body')]),
    );
    expect(new Set(contentTypes)).toEqual(new Set([HTTP_INTEGRATION_CONTENT_TYPE]));
  });
});

describe('prelude parsing (Function URL side)', () => {
  it('finds a delimiter split across appended chunks by rescanning the 7 bytes before the seam', () => {
    const first = Buffer.concat([Buffer.from('{}'), Buffer.alloc(5)]);
    expect(findPreludeDelimiter(first)).toBe(-1);
    const joined = Buffer.concat([first, Buffer.alloc(3), Buffer.from('x')]);
    expect(findPreludeDelimiter(joined, first.length)).toBe(2);
  });

  it('turns status, headers and cookies into a status line and headers; 200 when status is absent', () => {
    expect(parsePrelude(Buffer.from('{"statusCode":418,"headers":{"x":"1","n":2},"cookies":["a=1","b=2"]}'))).toEqual({
      statusCode: 418,
      headers: { x: '1', n: '2', 'set-cookie': ['a=1', 'b=2'] },
    });
    expect(parsePrelude(Buffer.from('{}'))).toEqual({ statusCode: 200, headers: {} });
  });

  it('rejects preludes the service could not use', () => {
    expect(parsePrelude(Buffer.from('not json'))).toBeUndefined();
    expect(parsePrelude(Buffer.from('[1]'))).toBeUndefined();
    expect(parsePrelude(Buffer.from('{"statusCode":"200"}'))).toBeUndefined();
    expect(parsePrelude(Buffer.from('{"statusCode":99}'))).toBeUndefined();
  });
});
