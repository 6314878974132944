/**
 * How replies are cut into stream deltas. The pieces always concatenate back to the input exactly,
 * which is what lets tests assert that joined deltas equal the buffered reply.
 */

/** Split text into pieces of alternately one and two words (each piece keeps its trailing space). */
export function splitText(text: string): string[] {
  if (text === '') return [];
  const words = text.match(/\S+\s*/g);
  if (!words) return [text];
  const lead = text.slice(0, text.length - words.join('').length);
  const pieces: string[] = [];
  let i = 0;
  let take = 1;
  while (i < words.length) {
    pieces.push(words.slice(i, i + take).join(''));
    i += take;
    take = take === 1 ? 2 : 1;
  }
  pieces[0] = lead + pieces[0];
  return pieces;
}

/** Split a tool-call arguments string into 2 (short) or 3 fragments, the way providers stream them. */
export function splitArguments(json: string): string[] {
  if (json.length < 2) return [json];
  const parts = json.length < 12 ? 2 : 3;
  const size = Math.ceil(json.length / parts);
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}
