import type { UserContentPart } from '../../openai/chat-messages';
import { InvalidRequestError } from '../../errors/gateway-errors';
import { parseDataUrl } from '../../openai/data-url';
import type { GeminiPart } from './wire-request';

/**
 * OpenAI user content parts → Gemini parts (Gemini API, providers.md §3.2: `text`,
 * `inlineData {mimeType, data}`, `fileData {mimeType, fileUri}`).
 *
 * Images must be `data:` URLs, sent inline. An http(s) image URL is refused with a 400 naming the
 * limitation: `fileData.fileUri` is for Files API URIs (§3.2), which belong to the project of our
 * upstream key, not to the client, and adapters do no I/O, so the gateway cannot download the image
 * and inline it either. Sending the URL anyway would fail upstream with an opaque error.
 */

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

/**
 * Converts one part of a user message.
 * @param where the part's JSON path in the request (for error messages), e.g. `messages[2].content[1]`.
 * @throws InvalidRequestError for an OpenAI `file_id` (meaningless to Gemini), a malformed data URL
 *   or an image URL that is not a data URL.
 */
export function toGeminiUserPart(part: UserContentPart, where: string): GeminiPart {
  switch (part.type) {
    case 'text':
      return { text: part.text };
    case 'image_url':
      return imagePart(part.image_url.url, `${where}.image_url.url`);
    case 'input_audio':
      // OpenAI's formats are `wav` and `mp3`; Gemini names them audio/wav and audio/mp3.
      return { inlineData: { mimeType: `audio/${part.input_audio.format}`, data: part.input_audio.data } };
    case 'file': {
      const data = part.file.file_data;
      if (data === undefined) {
        throw new InvalidRequestError('File ids are not supported for this model; send the file inline as file_data.', { param: `${where}.file.file_id` });
      }
      if (data.startsWith('data:')) return { inlineData: inlineData(data, `${where}.file.file_data`) };
      // Bare base64: the filename's extension names the type; PDF is what OpenAI's file parts carry.
      return { inlineData: { mimeType: mimeFromPath(part.file.filename ?? '') ?? 'application/pdf', data } };
    }
    default:
      return part satisfies never;
  }
}

function imagePart(url: string, param: string): GeminiPart {
  if (url.startsWith('data:')) return { inlineData: inlineData(url, param) };
  const remote = /^https?:\/\//i.test(url);
  throw new InvalidRequestError(
    remote
      ? 'Image URLs are not supported for Gemini models: send the image inline as a data URL (data:image/png;base64,...).'
      : 'Invalid image URL: Gemini models take images as data URLs (data:image/png;base64,...).',
    { param, code: remote ? 'unsupported_image_url' : 'invalid_image_url' },
  );
}

/**
 * A data URL (openai/data-url.ts) → inline data, always base64 as Gemini wants; no media type is
 * `text/plain` (RFC 2397's default).
 * @throws InvalidRequestError when there is no comma or the percent-encoding is malformed.
 */
function inlineData(url: string, param: string): { mimeType: string; data: string } {
  const parsed = parseDataUrl(url);
  if (parsed === undefined) throw new InvalidRequestError('Invalid data URL: expected data:<mime type>;base64,<data>.', { param });
  const mimeType = parsed.mediaType || 'text/plain';
  if (parsed.base64) return { mimeType, data: parsed.payload };
  try {
    return { mimeType, data: Buffer.from(decodeURIComponent(parsed.payload), 'utf8').toString('base64') };
  } catch {
    throw new InvalidRequestError('Invalid data URL: malformed percent-encoding.', { param });
  }
}

function mimeFromPath(path: string): string | undefined {
  const m = /\.([a-z0-9]+)$/i.exec(path);
  return m?.[1] === undefined ? undefined : MIME_BY_EXTENSION[m[1].toLowerCase()];
}
