// The provider registry, and the presets that turn <PROVIDER>_API_KEY
// environment variables into channels.
import { anthropicProvider } from './anthropic/index.js';
import { azureProvider } from './azure/index.js';
import { geminiProvider } from './gemini/index.js';
import { ollamaProvider } from './ollama/index.js';
import { openaiProvider } from './openai/index.js';
import type { Provider } from './types.js';

export * from './types.js';
export type { WireAdapter, WireStream, WireContext, ChatCompletion, ChatCompletionChunk, EmbeddingsResponse, OpenAIUsage } from './wire.js';
export { ProviderFailure } from './wire.js';

const providers = new Map<string, Provider>([openaiProvider, azureProvider, ollamaProvider, anthropicProvider, geminiProvider].map((p) => [p.type, p]));

export function providerOf(type: string): Provider | undefined {
  return providers.get(type);
}

export function providerTypes(): string[] {
  return [...providers.keys()];
}

export interface ProviderPreset {
  /** Environment prefix: OPENAI for OPENAI_API_KEY. */
  env: string;
  type: string;
  baseUrl?: string;
  models: string[];
}

/** Known providers: a key alone is enough for these. */
export const presets: ProviderPreset[] = [
  {
    env: 'OPENAI',
    type: 'openai',
    baseUrl: 'https://api.openai.com/v1',
    models: ['gpt-4o-mini', 'gpt-4o', 'gpt-4.1-mini', 'gpt-4.1', 'text-embedding-3-small', 'text-embedding-3-large'],
  },
  { env: 'DEEPSEEK', type: 'openai', baseUrl: 'https://api.deepseek.com/v1', models: ['deepseek-chat', 'deepseek-reasoner'] },
  { env: 'GROQ', type: 'openai', baseUrl: 'https://api.groq.com/openai/v1', models: ['llama-3.3-70b-versatile', 'llama-3.1-8b-instant'] },
  { env: 'MISTRAL', type: 'openai', baseUrl: 'https://api.mistral.ai/v1', models: ['mistral-large-latest', 'mistral-small-latest', 'mistral-embed'] },
  { env: 'OPENROUTER', type: 'openai', baseUrl: 'https://openrouter.ai/api/v1', models: ['openai/gpt-4o-mini'] },
  { env: 'TOGETHER', type: 'openai', baseUrl: 'https://api.together.xyz/v1', models: ['meta-llama/Llama-3.3-70B-Instruct-Turbo'] },
  {
    env: 'SILICONFLOW',
    type: 'openai',
    baseUrl: 'https://api.siliconflow.cn/v1',
    models: ['Qwen/Qwen2.5-7B-Instruct', 'BAAI/bge-m3', 'BAAI/bge-reranker-v2-m3'],
  },
  { env: 'DASHSCOPE', type: 'openai', baseUrl: 'https://dashscope.aliyuncs.com/compatible-mode/v1', models: ['qwen-plus', 'qwen-turbo', 'text-embedding-v3'] },
  { env: 'MOONSHOT', type: 'openai', baseUrl: 'https://api.moonshot.cn/v1', models: ['moonshot-v1-8k'] },
  { env: 'JINA', type: 'openai', baseUrl: 'https://api.jina.ai/v1', models: ['jina-embeddings-v3', 'jina-reranker-v2-base-multilingual'] },
  { env: 'AZURE_OPENAI', type: 'azure', models: ['gpt-4o-mini'] },
  { env: 'OLLAMA', type: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', models: ['llama3.2'] },
  { env: 'ANTHROPIC', type: 'anthropic', baseUrl: 'https://api.anthropic.com', models: ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1'] },
  {
    env: 'GEMINI',
    type: 'gemini',
    baseUrl: 'https://generativelanguage.googleapis.com',
    models: ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-2.5-flash-lite', 'gemini-embedding-001'],
  },
];

/** The wire format of a provider under any other prefix (<PREFIX>_TYPE): these three. */
export const ENV_WIRE_TYPES = ['openai', 'anthropic', 'gemini'] as const;
