import type { UserContentPart } from '../../openai/chat-messages';
import { InvalidRequestError } from '../../errors/gateway-errors';
import { parseDataUrl } from '../../openai/data-url';
import type { AnthropicCacheControl, AnthropicContentBlock, AnthropicDocumentBlock, AnthropicImageBlock, AnthropicTextBlock } from './request-body';

/**
 * OpenAI user content parts → Anthropic content blocks (providers.md §2.3 translation notes).
 * Images: a `data:` URL becomes a base64 source with its media type split out; an http(s) URL becomes
 * a url source. Files given inline become documents (OpenAI takes PDFs there). Audio and uploaded-file
 * ids have no Anthropic counterpart and are refused with a 400 naming the part.
 */

/**
 * Converts one user content part. `param` is the part's path for error messages
 * (e.g. `messages[2].content[1]`).
 * @throws InvalidRequestError (400) for audio, file ids, and image URLs that are neither data nor http(s).
 */
export function userPartToBlock(part: UserContentPart, param: string): AnthropicContentBlock {
  switch (part.type) {
    case 'text':
      return withCacheControl<AnthropicTextBlock>({ type: 'text', text: part.text }, part.cache_control);
    case 'image_url':
      return withCacheControl(imageBlock(part.image_url.url, `${param}.image_url.url`), part.cache_control);
    case 'file':
      return withCacheControl(documentBlock(part.file, `${param}.file`), part.cache_control);
    case 'input_audio':
      throw new InvalidRequestError('Audio input is not supported by this model.', { param, code: 'unsupported_content' });
    default:
      throw new InvalidRequestError('Unsupported content part type.', { param });
  }
}

/** The block with the client's cache breakpoint (OpenRouter's `cache_control` on a part), when it set one. */
export function withCacheControl<B extends { cache_control?: AnthropicCacheControl }>(block: B, cacheControl: AnthropicCacheControl | undefined): B {
  return cacheControl === undefined ? block : { ...block, cache_control: cacheControl };
}

function imageBlock(url: string, param: string): AnthropicImageBlock {
  if (url.startsWith('data:')) {
    // Anthropic takes base64 only; a percent-encoded data URL cannot be passed on as is.
    const parsed = parseDataUrl(url);
    if (parsed === undefined || !parsed.base64 || parsed.mediaType === '') {
      throw new InvalidRequestError('Image data URLs must look like data:image/png;base64,<data>.', { param, code: 'invalid_image_url' });
    }
    return { type: 'image', source: { type: 'base64', media_type: parsed.mediaType, data: parsed.payload } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw new InvalidRequestError('Image URLs must be http(s) URLs or base64 data URLs.', { param, code: 'invalid_image_url' });
}

function documentBlock(file: { file_id?: string | undefined; file_data?: string | undefined }, param: string): AnthropicDocumentBlock {
  if (file.file_data === undefined) {
    // An OpenAI file id names a file stored at OpenAI; Anthropic cannot read it.
    throw new InvalidRequestError('Files must be sent inline as file_data for this model; file_id is not supported.', {
      param,
      code: 'unsupported_content',
    });
  }
  if (!file.file_data.startsWith('data:')) {
    // OpenAI's inline files are PDFs; bare base64 (no data: prefix) is taken as one.
    return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: file.file_data } };
  }
  const parsed = parseDataUrl(file.file_data);
  if (parsed === undefined || !parsed.base64) {
    throw new InvalidRequestError('file_data must be base64, or a data URL like data:application/pdf;base64,<data>.', { param, code: 'invalid_file' });
  }
  return { type: 'document', source: { type: 'base64', media_type: parsed.mediaType || 'application/pdf', data: parsed.payload } };
}
