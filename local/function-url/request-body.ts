import type { IncomingMessage } from 'node:http';

/**
 * Bytes read past the limit before the stand-in gives up on a too-large upload and drops the
 * connection. Reading them (and discarding) lets the 413 reach clients that only look at the
 * response once their upload is done.
 */
const DISCARD_ALLOWANCE_BYTES = 64 * 1024 * 1024;

/**
 * Reads the whole request body. Resolves with the bytes (one Buffer, no extra copy when the body
 * came in one chunk), or `undefined` when it is longer than `maxBytes`: the excess is drained, not
 * kept. Rejects if the client aborts the upload.
 */
export function readRequestBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    let ended = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (tooLarge) {
        if (size > maxBytes + DISCARD_ALLOWANCE_BYTES) req.destroy();
        return;
      }
      if (size > maxBytes) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      ended = true;
      if (tooLarge) resolve(undefined);
      else resolve(chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, size));
    });
    req.on('error', reject);
    req.on('close', () => {
      if (!ended) reject(new Error('client aborted the request body'));
    });
  });
}
