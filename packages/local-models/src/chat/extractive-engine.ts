// local-extractive as a ChatEngine: the whole answer is found first (it is
// cheap and its errors should be HTTP errors), then streamed a cited
// sentence or a few words at a time.
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

/**
 * Pieces that concatenate back to the text exactly: one after each source
 * marker (also where no space follows it, as in CJK text), and within a
 * passage every 6 words.
 */
export function splitIntoChunks(text: string): string[] {
  const chunks: string[] = [];
  for (const passage of text.split(/(?<=\[[^\]\s]{1,40}\]\s*)(?=\S)/)) {
    const words = passage.split(/(?<=\s)(?=\S)/);
    for (let i = 0; i < words.length; i += 6) chunks.push(words.slice(i, i + 6).join(''));
  }
  return chunks.filter((c) => c.length > 0);
}
