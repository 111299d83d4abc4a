// The chat endpoint's event stream: OpenAI chunks on `data:` lines, and with
// detail=true FastGPT's named events (answer, fastAnswer, flowNodeStatus,
// updateVariables, toolCall, toolResponse, flowResponses after [DONE], error). Headers go out with the
// first event, so without detail a failure before the answer starts is still
// a plain HTTP error with its real status.
import type { ServerResponse } from 'node:http';
import { sseData, sseEvent } from '@kbchat/shared';
import type { ChatSink } from './pipeline.js';
import type { StepRecord, TokenUsage } from './records.js';

export interface ChatStreamOptions {
  id: string;
  model: string;
  detail: boolean;
  includeUsage: boolean;
  requestId: string;
}

export class ChatEventStream implements ChatSink {
  private readonly created = Math.floor(Date.now() / 1000);
  private roleSent = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly opts: ChatStreamOptions,
  ) {}

  /** Whether anything was written: after that, errors can only be events. */
  get started(): boolean {
    return this.res.headersSent;
  }

  status(name: string): void {
    if (this.opts.detail) this.event('flowNodeStatus', { status: 'running', name });
  }

  answer(text: string): void {
    this.event(this.opts.detail ? 'answer' : null, this.chunk({ content: text }, null));
  }

  fastAnswer(text: string): void {
    this.event(this.opts.detail ? 'fastAnswer' : null, this.chunk({ content: text }, null));
  }

  variables(values: Record<string, unknown>): void {
    if (this.opts.detail) this.event('updateVariables', values);
  }

  toolCall(call: { id: string; toolName: string; params: string }): void {
    if (this.opts.detail)
      this.event('toolCall', { tool: { id: call.id, toolName: call.toolName, functionName: call.toolName, params: call.params, response: '' } });
  }

  toolResponse(call: { id: string; toolName: string; response: string; ok: boolean }): void {
    if (this.opts.detail) this.event('toolResponse', { tool: { id: call.id, toolName: call.toolName, response: call.response, ok: call.ok } });
  }

  finish(usage: TokenUsage, responseData: StepRecord[]): void {
    const name = this.opts.detail ? 'answer' : null;
    this.event(name, this.chunk({}, 'stop'));
    if (this.opts.includeUsage) this.event(name, { ...this.base(), choices: [], usage });
    this.write(name, '[DONE]');
    if (this.opts.detail) this.event('flowResponses', responseData);
    this.res.end();
  }

  /** An error is always a named event, with or without detail. */
  fail(body: object): void {
    this.event('error', body);
    this.res.end();
  }

  private base() {
    return { id: this.opts.id, object: 'chat.completion.chunk', created: this.created, model: this.opts.model };
  }

  private chunk(delta: { content?: string }, finishReason: string | null) {
    const withRole = this.roleSent ? delta : { role: 'assistant', ...delta };
    this.roleSent = true;
    return { ...this.base(), choices: [{ delta: withRole, index: 0, finish_reason: finishReason }] };
  }

  private event(name: string | null, data: object): void {
    this.write(name, data);
  }

  private write(name: string | null, data: string | object): void {
    const res = this.res;
    if (res.destroyed || res.writableEnded) return; // the client left: the turn still completes and is stored
    if (!res.headersSent) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': this.opts.requestId,
      });
    }
    res.write(name ? sseEvent(name, data) : sseData(data));
  }
}
