// local-extractive as a ChatEngine: the whole answer is found first (it is
// cheap and its errors should be HTTP errors), then streamed a sentence or a
// few words at a time.
import type { EmbedPool } from '../embeddings/embed-pool.js';
import { answerFromPrompt, type ExtractiveOptions } from '../extractive/extractive-answer.js';
import { LOCAL_EXTRACTIVE_MODEL } from '../models.js';
import type { ChatEngine, ChatGeneration, PlainMessage } from './chat-engine.js';

export class ExtractiveEngine implements ChatEngine {
  readonly model = LOCAL_EXTRACTIVE_MODEL;

  constructor(
    private readonly pool: EmbedPool,
    private readonly options?: ExtractiveOptions,
  ) {}

  async generate(_request: unknown, messages: PlainMessage[]): Promise<ChatGeneration> {
    const answer = await answerFromPrompt(messages, this.pool, this.options);
    const chunks = splitIntoChunks(answer.text);
    return {
      pieces: (async function* () {
        yield* chunks;
      })(),
      finishReason: () => 'stop',
    };
  }
}

/** Pieces that concatenate back to the text exactly: after each source marker, or every 6 words. */
export function splitIntoChunks(text: string): string[] {
  const words = text.split(/(?<= )/);
  const chunks: string[] = [];
  let current = '';
  let count = 0;
  for (const w of words) {
    current += w;
    count++;
    if (/\]\s$/.test(w) || count >= 6) {
      chunks.push(current);
      current = '';
      count = 0;
    }
  }
  if (current) chunks.push(current);
  return chunks;
}
