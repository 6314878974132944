/**
 * The one `data:` URL parser (RFC 2397: `data:[<media type>][;<parameter>…][;base64],<payload>`), for
 * the data URLs OpenAI's content parts carry (`image_url.url`, `file.file_data`). Each reader decides
 * what it accepts: the Anthropic adapter base64 only, the Gemini adapter re-encodes percent-encoded
 * payloads, the prompt count reads the bytes (usage/media-tokens.ts `dataUrlBytes`).
 */

/** A data URL's parts. */
export interface DataUrl {
  /** The media type, lower case; '' when the URL names none. */
  mediaType: string;
  /** The payload is base64 (a `;base64` parameter, any case); otherwise it is percent-encoded. */
  base64: boolean;
  /** Everything after the first comma, as sent (not decoded). */
  payload: string;
}

/** Splits a data URL; undefined for any other URL or one without a comma. */
export function parseDataUrl(url: string): DataUrl | undefined {
  if (url.slice(0, 5).toLowerCase() !== 'data:') return undefined;
  const comma = url.indexOf(',');
  if (comma < 0) return undefined;
  const [mediaType = '', ...params] = url.slice('data:'.length, comma).split(';');
  return { mediaType: mediaType.toLowerCase(), base64: params.some((p) => p.toLowerCase() === 'base64'), payload: url.slice(comma + 1) };
}
