// local-gguf: a generative model from an operator's GGUF file through
// node-llama-cpp. That package is an OPTIONAL peer (its npm install with every
// GPU variant is about 725 MB), imported only when local-gguf is first used.
// Without the package or the file the model is simply not listed.
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import type { ChatRequest } from '@kbchat/shared';
import type { ChatEngine, ChatGeneration, PlainMessage } from '../chat/chat-engine.js';
import { LocalModelError } from '../http-util.js';
import { LOCAL_GGUF_MODEL } from '../models.js';

export type GgufAvailability = { available: true; path: string; fileName: string } | { available: false; reason: string };

/** Is local-gguf usable: a path given, the file there, node-llama-cpp installed? Loads nothing. */
export function findGguf(path: string | undefined): GgufAvailability {
  if (!path) return { available: false, reason: 'no GGUF file configured (ggufPath / LOCAL_GGUF_PATH)' };
  if (!existsSync(path) || !statSync(path).isFile()) return { available: false, reason: `GGUF file not found: ${path}` };
  if (!isNodeLlamaCppInstalled()) return { available: false, reason: 'the optional package node-llama-cpp is not installed' };
  return { available: true, path, fileName: basename(path) };
}

export function isNodeLlamaCppInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('node-llama-cpp');
    return true;
  } catch {
    return false;
  }
}

// Only the parts of node-llama-cpp used here, so that it needs no types at build time.
interface LlamaModule {
  getLlama(
    options: Record<string, unknown>,
  ): Promise<{ loadModel(o: { modelPath: string; gpuLayers?: number }): Promise<LlamaModelLike>; dispose(): Promise<void> }>;
  LlamaChatSession: new (o: { contextSequence: unknown; autoDisposeSequence?: boolean }) => LlamaSessionLike;
}
interface LlamaModelLike {
  createContext(o: { contextSize: number; sequences?: number }): Promise<{ getSequence(): { clearHistory(): Promise<void> }; dispose(): Promise<void> }>;
  dispose(): Promise<void>;
}
interface LlamaSessionLike {
  setChatHistory(history: unknown[]): void;
  promptWithMeta(prompt: string, o: Record<string, unknown>): Promise<{ stopReason: string }>;
  dispose(o?: { disposeSequence?: boolean }): void;
}

export class GgufEngine implements ChatEngine {
  readonly model = LOCAL_GGUF_MODEL;
  private loaded: Promise<{ mod: LlamaModule; sequence: { clearHistory(): Promise<void> }; dispose(): Promise<void> }> | undefined;
  /** One context sequence, so requests take turns. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly contextSize: number,
  ) {}

  private load() {
    this.loaded ??= (async () => {
      let mod: LlamaModule;
      try {
        mod = (await import('node-llama-cpp' as string)) as LlamaModule;
      } catch (err) {
        throw new LocalModelError(503, `local-gguf needs the optional package node-llama-cpp: ${(err as Error).message}`, 'model_unavailable', 'model');
      }
      // CPU prebuilt binaries only: never build from source or download at run time.
      const llama = await mod.getLlama({ gpu: false, build: 'never', skipDownload: true, progressLogs: false, logLevel: 'error' });
      const model = await llama.loadModel({ modelPath: this.path, gpuLayers: 0 });
      const context = await model.createContext({ contextSize: this.contextSize, sequences: 1 });
      // One sequence, reused by every request in turn (getSequence() hands out a new one each call).
      return {
        mod,
        sequence: context.getSequence(),
        dispose: async () => {
          await context.dispose();
          await model.dispose();
          await llama.dispose();
        },
      };
    })();
    this.loaded.catch(() => (this.loaded = undefined)); // a later request may retry
    return this.loaded;
  }

  async generate(request: ChatRequest, messages: PlainMessage[], signal: AbortSignal): Promise<ChatGeneration> {
    const last = messages.at(-1);
    if (!last || last.role !== 'user')
      throw new LocalModelError(400, "Invalid 'messages': the last message must be from the user.", 'invalid_field', 'messages');
    let loaded;
    try {
      loaded = await this.load();
    } catch (err) {
      if (err instanceof LocalModelError) throw err;
      throw new LocalModelError(503, `local-gguf could not load ${this.path}: ${(err as Error).message}`, 'model_unavailable', 'model');
    }
    const { mod, sequence } = loaded;
    const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? 512;
    const pieces = new PieceQueue();
    let stopReason = 'eogToken';
    const turn = this.queue.then(async () => {
      const session = new mod.LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false });
      try {
        session.setChatHistory(toHistory(messages.slice(0, -1)));
        const result = await session.promptWithMeta(last.text, {
          maxTokens,
          temperature: request.temperature ?? 0.7,
          signal,
          stopOnAbortSignal: true,
          onTextChunk: (text: string) => pieces.push(text),
        });
        stopReason = result.stopReason;
      } finally {
        session.dispose({ disposeSequence: false });
        await sequence.clearHistory();
      }
    });
    this.queue = turn.catch(() => {});
    turn.then(
      () => pieces.end(),
      (err: unknown) => pieces.end(err instanceof Error ? err : new Error(String(err))),
    );
    return { pieces: pieces.iterate(), finishReason: () => (stopReason === 'maxTokens' ? 'length' : 'stop') };
  }

  async close(): Promise<void> {
    const loaded = await this.loaded?.catch(() => undefined);
    await loaded?.dispose();
  }
}

function toHistory(messages: PlainMessage[]): unknown[] {
  return messages.map((m) =>
    m.role === 'assistant' ? { type: 'model', response: [m.text] } : m.role === 'user' ? { type: 'user', text: m.text } : { type: 'system', text: m.text },
  );
}

/** Callback pieces as an async iterable. */
class PieceQueue {
  private items: string[] = [];
  private done = false;
  private error: Error | undefined;
  private wake: (() => void) | undefined;

  push(text: string): void {
    this.items.push(text);
    this.wake?.();
  }

  end(error?: Error): void {
    this.done = true;
    this.error = error;
    this.wake?.();
  }

  async *iterate(): AsyncGenerator<string> {
    for (;;) {
      if (this.items.length > 0) {
        yield this.items.shift()!;
        continue;
      }
      if (this.done) {
        if (this.error) throw this.error;
        return;
      }
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }
}
