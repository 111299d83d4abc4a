// A stored turn's answer while it is being made. The question and a 'running'
// answer are stored before any model is called (ChatHistoryStore.beginTurn);
// from then on this records what streams out, writes it every second with a
// heartbeat, and stops the turn when its asker asks: at once when the stop
// reaches this process, within a heartbeat when it reaches another one (the
// answer is then no longer 'running' in the store). No HTTP here.
import type { AnswerOutcome, ChatHistoryStore } from './history-store.js';
import type { ChatSink } from './pipeline.js';

/** How often a running answer writes what it has made (and so how soon a stop made elsewhere is seen). */
export const HEARTBEAT_MS = 1000;
/** A running answer whose heartbeat is older than this was cut off: the process making it died. */
export const STALE_AFTER_MS = 30_000;

/** The answers this process is making, so that a stop request here aborts one at once. */
export class RunningAnswers {
  private readonly running = new Map<string, AnswerRecorder>();

  add(r: AnswerRecorder): void {
    this.running.set(key(r.chatPk, r.dataId), r);
  }

  delete(r: AnswerRecorder): void {
    if (this.running.get(key(r.chatPk, r.dataId)) === r) this.running.delete(key(r.chatPk, r.dataId));
  }

  /** Stops the answer if this process is making it. */
  stop(chatPk: number, dataId: string): boolean {
    const r = this.running.get(key(chatPk, dataId));
    r?.stop();
    return !!r;
  }

  get size(): number {
    return this.running.size;
  }
}

const key = (chatPk: number, dataId: string) => `${chatPk}:${dataId}`;

export class AnswerRecorder implements ChatSink {
  /** The answer's text so far (streamed pieces and fixed replies). */
  text = '';
  private written = '';
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private readonly stopper = new AbortController();
  private readonly startedAt = performance.now();
  private firstTextAt: number | undefined;

  constructor(
    private readonly out: ChatSink,
    private readonly store: ChatHistoryStore,
    private readonly registry: RunningAnswers,
    readonly chatPk: number,
    readonly dataId: string,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Aborted when the asker stops the answer. */
  get signal(): AbortSignal {
    return this.stopper.signal;
  }

  start(): this {
    this.registry.add(this);
    this.timer = setInterval(() => {
      this.beating ??= this.beat().finally(() => (this.beating = undefined));
    }, HEARTBEAT_MS);
    this.timer.unref();
    return this;
  }

  stop(): void {
    this.stopper.abort();
  }

  status(name: string): void {
    this.out.status(name);
  }

  /** Milliseconds from the question to the answer's first text (to now, where none has streamed: a non-stream answer). */
  get ttftMs(): number {
    return (this.firstTextAt ?? performance.now()) - this.startedAt;
  }

  answer(text: string): void {
    if (text) this.firstTextAt ??= performance.now();
    this.text += text;
    this.out.answer(text);
  }

  fastAnswer(text: string): void {
    if (text) this.firstTextAt ??= performance.now();
    this.text += text;
    this.out.fastAnswer(text);
  }

  variables(values: Record<string, unknown>): void {
    this.out.variables(values);
  }

  toolCall(call: { id: string; toolName: string; params: string }): void {
    this.out.toolCall(call);
  }

  toolResponse(call: { id: string; toolName: string; response: string; ok: boolean }): void {
    this.out.toolResponse(call);
  }

  /**
   * Writes how the answer ended; after this the answer is no longer running.
   * Never throws: an answer whose end cannot be written (the store closing
   * under it) reads as interrupted once its heartbeat is stale.
   */
  async finish(outcome: AnswerOutcome): Promise<void> {
    clearInterval(this.timer);
    this.registry.delete(this);
    await this.beating;
    await this.store.finishAnswer(this.chatPk, this.dataId, outcome).catch(this.onError);
  }

  private async beat(): Promise<void> {
    const text = this.text;
    try {
      const running = await this.store.beatAnswer(this.chatPk, this.dataId, text === this.written ? undefined : text);
      this.written = text;
      if (!running) this.stop();
    } catch (err) {
      // A store that cannot be written now: the answer goes on, and its end is written when it comes.
      this.onError(err);
    }
  }
}
