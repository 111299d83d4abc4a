// The models this package serves and how /v1/models describes them.

export const LOCAL_EMBED_MODEL = 'local-embed';
export const LOCAL_EXTRACTIVE_MODEL = 'local-extractive';
export const LOCAL_GGUF_MODEL = 'local-gguf';
export const LOCAL_OWNER = 'kbchat-local';

/** USE-lite's vector size. */
export const EMBED_DIMENSIONS = 512;
/** USE-lite's graph reads only this many of its own tokens of each input. */
export const EMBED_MAX_MODEL_TOKENS = 128;

export interface LocalModelInfo {
  id: string;
  object: 'model';
  owned_by: typeof LOCAL_OWNER;
  kind: 'chat' | 'embeddings';
  dimensions?: number;
  supports_tools: boolean;
  description: string;
}

export function embedModelInfo(): LocalModelInfo {
  return {
    id: LOCAL_EMBED_MODEL,
    object: 'model',
    owned_by: LOCAL_OWNER,
    kind: 'embeddings',
    dimensions: EMBED_DIMENSIONS,
    supports_tools: false,
    description:
      'Universal Sentence Encoder lite, run in-process: 512-d unit vectors, English. ' +
      `Reads only the first ${EMBED_MAX_MODEL_TOKENS} of its tokens of each input (about one or two sentences); the rest is ignored.`,
  };
}

export function extractiveModelInfo(): LocalModelInfo {
  return {
    id: LOCAL_EXTRACTIVE_MODEL,
    object: 'model',
    owned_by: LOCAL_OWNER,
    kind: 'chat',
    supports_tools: false,
    description:
      'Extractive, not generative: answers only by quoting the most relevant sentences of the knowledge given in the prompt ' +
      '(<Reference>/<Data>/<Quote>/<QA> blocks), each with its source marker, and says so when nothing there fits. ' +
      'It writes no new text and follows no instructions.',
  };
}

export function ggufModelInfo(fileName: string): LocalModelInfo {
  return {
    id: LOCAL_GGUF_MODEL,
    object: 'model',
    owned_by: LOCAL_OWNER,
    kind: 'chat',
    supports_tools: false,
    description: `Generative model from the GGUF file ${fileName}, run in-process with node-llama-cpp on the CPU.`,
  };
}
