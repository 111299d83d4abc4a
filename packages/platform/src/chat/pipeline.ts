// One chat turn of an application: classification, question completion,
// search and extraction, then the answering model call. No HTTP here: the
// route hands in the request and a sink for what streams out, and gets the
// answer, the usage and one responseData record per step.
import { countTextTokens } from '@kbchat/shared';
import type { AnnotationMatcher } from '../annotations/matcher.js';
import { annotationReply } from './annotation-step.js';
import type { App } from '../apps/service.js';
import { GatewayError, recordCall, type GatewayClient, type ModelCall } from '../gateway-client/index.js';
import { PlatformError } from '../http/errors.js';
import type { KeyCaller } from '../keys/auth.js';
import type { LlmModel, ModelConfig } from '../models/config-file.js';
import { extendQuery } from '../search/query-extension.js';
import { appSearchRequest } from '../search/app-search.js';
import type { SearchService } from '../search/service.js';
import { DEFAULT_MAX_CONTEXT, fitStepInput, tokensWithin } from '../search/token-limits.js';
import { buildMessages, type ChatTurn, type QuoteItem } from './prompt.js';
import { cutRecord, seconds, secondsSince, stepCalls, UsageTotal, type StepRecord, type TokenUsage } from './records.js';
import { classifyQuestion, extractFields } from './steps/index.js';
import { runToolLoop, toolRecords } from './tool-loop.js';
import { KNOWLEDGE_BASE_TOOL, withSearchTool } from './search-tool.js';
import type { ToolRunner } from '../tools/runner.js';

/** What streams out while a turn runs (a no-op sink for non-stream requests). */
export interface ChatSink {
  /** A step starts (FastGPT's flowNodeStatus). */
  status(name: string): void;
  /** A piece of the model's answer. */
  answer(text: string): void;
  /** A fixed reply, sent whole. */
  fastAnswer(text: string): void;
  variables(values: Record<string, unknown>): void;
  /** The model called a tool (FastGPT's toolCall event). */
  toolCall(call: { id: string; toolName: string; params: string }): void;
  /** A tool's result, sent back to the model (FastGPT's toolResponse event). */
  toolResponse(call: { id: string; toolName: string; response: string; ok: boolean }): void;
}

export interface ChatTurnInput {
  question: string;
  history: ChatTurn[];
  variables: Record<string, unknown>;
  stream: boolean;
  /** Aborted when the client goes away: the answering call is cancelled at the gateway. */
  signal?: AbortSignal;
  /** Called for every failed model call, with the exact body sent, so an operator can replay it. */
  onModelFailure?(step: string, err: GatewayError): void;
}

export interface ChatTurnResult {
  content: string;
  model: string;
  usage: TokenUsage;
  responseData: StepRecord[];
  newVariables: Record<string, unknown>;
  /** The annotation that gave the answer, word for word (nothing else ran). */
  annotationId?: string;
  /** Quotes the answering model was given (undefined when no model answered). */
  quoteCount?: number;
}

export class ChatService {
  constructor(
    private readonly gateway: GatewayClient,
    private readonly search: SearchService,
    private readonly models: ModelConfig,
    private readonly annotations?: AnnotationMatcher,
    private readonly tools?: ToolRunner,
  ) {}

  /** This service for one platform request: its model calls carry the request's id to the gateway (GatewayClient.forRequest). */
  forRequest(requestId: string): ChatService {
    const gateway = this.gateway.forRequest(requestId);
    return new ChatService(gateway, this.search.withGateway(gateway), this.models, this.annotations, this.tools);
  }

  /** The gateway request ids of the model calls this service (made by forRequest) has made: a stopped or failed turn's too. */
  requestIds(): string[] {
    return this.gateway.requestIdsSoFar();
  }

  async run(caller: KeyCaller, app: App, input: ChatTurnInput, sink: ChatSink): Promise<ChatTurnResult> {
    const s = app.settings;
    const records: StepRecord[] = [];
    const usage = new UsageTotal();
    const failed = (step: string, err: unknown) => {
      if (err instanceof GatewayError && err.code !== 'client_closed') input.onModelFailure?.(step, err);
    };
    let datasetIds = s.datasets;
    let categoryPrompt = '';
    const model = this.llm(s.model);
    const answerTokens = this.answerTokens(app, model);
    this.checkQuestionFits(input.question, model, answerTokens);

    if (s.annotationReply.enabled && this.annotations) {
      const reply = await annotationReply(this.annotations, this.gateway, app, input.question, records);
      if (reply) {
        sink.fastAnswer(reply.answer);
        return { content: reply.answer, model: s.model, usage: usage.toJSON(), responseData: records, newVariables: input.variables, annotationId: reply.id };
      }
    }

    if (s.classify) {
      sink.status('Question classification');
      const classifier = this.stepModel(s.classify.model, 'usedInClassify', s.model);
      const fitted = fitStepInput(input.question, input.history, classifier.maxContext);
      const r = await classifyQuestion(this.gateway, classifier, {
        question: fitted.question,
        history: fitted.history,
        categories: s.classify.categories,
        background: s.classify.background,
      });
      if (r.failure) failed('classification', r.failure);
      usage.add(r.inputTokens, r.outputTokens);
      const category = s.classify.categories.find((c) => c.id === r.categoryId);
      records.push({
        moduleName: 'Question classification',
        moduleType: 'classifyQuestion',
        runningTime: seconds(r.runningTime),
        model: r.model,
        mode: r.mode,
        inputTokens: r.inputTokens,
        outputTokens: r.outputTokens,
        query: input.question,
        cqList: s.classify.categories.map((c) => ({ id: c.id, description: c.description })),
        cqResult: category?.id ?? null,
        error: r.error,
        ...cutRecord(fitted.inputCut),
        ...(r.requestId ? { requestId: r.requestId } : {}),
        ...stepCalls('classifyQuestion', r),
      });
      if (category?.reply !== undefined) {
        sink.fastAnswer(category.reply);
        return { content: category.reply, model: s.model, usage: usage.toJSON(), responseData: records, newVariables: input.variables };
      }
      if (category?.datasets) datasetIds = category.datasets;
      if (category?.prompt) categoryPrompt = category.prompt;
    }

    // Extraction needs no quotes: it runs while the search does.
    const extraction = s.extract ? this.extract(app, input, usage, failed) : undefined;
    // Awaited below; until then a rejection must not count as unhandled (the search may throw first).
    extraction?.catch(() => {});
    if (s.extract) sink.status('Content extraction');
    // The search as the model's tool (search-tool.ts): nothing is searched before it asks.
    const searchAsTool = s.search.asTool && datasetIds.length > 0;
    const quotes = datasetIds.length && !searchAsTool ? await this.searchQuotes(caller, app, datasetIds, input, usage, records, failed, sink) : [];
    let variables = input.variables;
    if (extraction) {
      const done = await extraction;
      records.push(done.record);
      variables = done.variables;
      sink.variables(variables);
    }

    sink.status('AI chat');
    const systemPrompt = [s.systemPrompt || model.defaultSystemChatPrompt || '', categoryPrompt].filter(Boolean).join('\n\n');
    const { messages, historyUsed } = buildMessages({
      systemPrompt,
      variables,
      history: input.history,
      question: input.question,
      quotes,
      quoteTemplate: s.quoteTemplate,
      quotePrompt: s.quotePrompt,
      maxContext: model.maxContext ?? DEFAULT_MAX_CONTEXT,
      answerTokens,
    });
    const temperature = s.temperature === undefined ? undefined : Math.min(s.temperature, model.maxTemperature ?? 2);
    const body: Record<string, unknown> = {
      ...(model.defaultConfig ?? {}),
      model: model.model,
      messages,
      ...(temperature === undefined ? {} : { temperature }),
      max_tokens: answerTokens,
    };
    const started = performance.now();
    // With tools, the answer is a loop of model calls and tool calls (tool-loop.ts).
    const tooled = s.tools.length && this.tools ? await this.tools.resolve(caller.teamId, s.tools) : { tools: [], missing: [] };
    const tools = searchAsTool ? [...tooled.tools, KNOWLEDGE_BASE_TOOL] : tooled.tools;
    if (tools.length || tooled.missing.length) {
      const found: QuoteItem[] = [];
      const runner = withSearchTool(this.tools, async (query) => {
        const more = await this.searchQuotes(caller, app, datasetIds, { ...input, question: query }, usage, records, failed, sink);
        found.push(...more);
        return more;
      });
      const loop = await runToolLoop({
        gateway: this.gateway,
        runner,
        teamId: caller.teamId,
        model,
        tools,
        body,
        maxRounds: tools.length ? s.toolRounds : 0,
        stream: input.stream,
        signal: input.signal,
        sink,
      }).catch((err: unknown) => {
        failed('answer', err);
        throw err;
      });
      usage.add(loop.inputTokens, loop.outputTokens);
      const quoteCount = quotes.length + found.length;
      records.push(...toolRecords(loop, tooled.missing, { model: model.model, query: input.question, quoteCount, runningTime: secondsSince(started) }));
      return { content: loop.content, model: model.model, usage: usage.toJSON(), responseData: records, newVariables: variables, quoteCount };
    }
    let content: string;
    let callUsage: TokenUsage | undefined;
    // The gateway's id of the call: the answer's trace leads to its request log there.
    let requestId: string | undefined;
    try {
      if (input.stream) {
        const r = await this.gateway.chatStream(body, (text) => sink.answer(text), input.signal);
        content = r.content;
        callUsage = r.usage;
        requestId = r.requestId;
      } else {
        const r = await this.gateway.chat(body, input.signal);
        content = String(r.json?.choices?.[0]?.message?.content ?? '');
        callUsage = r.json?.usage;
        requestId = r.requestId;
      }
    } catch (err) {
      failed('answer', err);
      throw err;
    }
    // Counted locally when the model reports no usage, never made up.
    const inputTokens = callUsage?.prompt_tokens ?? messages.reduce((n, m) => n + countTextTokens(m.content) + 4, 0);
    const outputTokens = callUsage?.completion_tokens ?? countTextTokens(content);
    usage.add(inputTokens, outputTokens);
    records.push({
      moduleName: 'AI chat',
      moduleType: 'chatNode',
      runningTime: secondsSince(started),
      model: model.model,
      inputTokens,
      outputTokens,
      query: input.question,
      maxToken: answerTokens,
      temperature,
      historyPreview: messages.slice(-(historyUsed + 1)).map((m) => ({ obj: m.role === 'assistant' ? 'AI' : 'Human', value: m.content.slice(0, 300) })),
      quoteCount: quotes.length,
      ...(requestId ? { requestId } : {}),
      modelCalls: [
        { step: 'chatNode', kind: 'chat', model: model.model, ...(requestId ? { requestId } : {}), runningTime: secondsSince(started) },
      ] satisfies ModelCall[],
    });
    return { content, model: model.model, usage: usage.toJSON(), responseData: records, newVariables: variables, quoteCount: quotes.length };
  }

  private async searchQuotes(
    caller: KeyCaller,
    app: App,
    datasetIds: string[],
    input: ChatTurnInput,
    usage: UsageTotal,
    records: StepRecord[],
    failed: (step: string, err: unknown) => void,
    sink: ChatSink,
  ): Promise<QuoteItem[]> {
    const s = app.settings.search;
    let extensionQueries: string[] | undefined;
    if (s.queryExtension.enabled) {
      sink.status('Question completion');
      const model = this.stepModel(s.queryExtension.model, 'usedInQueryExtension', app.settings.model);
      const started = performance.now();
      const modelCalls: ModelCall[] = [];
      try {
        const extend = () => extendQuery(this.gateway, model, input.question, { background: s.queryExtension.background, history: input.history });
        const r = await recordCall(modelCalls, { step: 'queryExtension', kind: 'chat', model: model.model }, extend, (x) => x.requestId);
        extensionQueries = r.queries;
        usage.add(r.inputTokens, r.outputTokens);
        records.push({
          moduleName: 'Question completion',
          moduleType: 'queryExtension',
          runningTime: secondsSince(started),
          model: r.model,
          inputTokens: r.inputTokens,
          outputTokens: r.outputTokens,
          query: input.question,
          queryExtensionResult: { model: r.model, queries: r.queries },
          ...cutRecord(r.inputCut),
          ...(r.requestId ? { requestId: r.requestId } : {}),
          modelCalls,
        });
      } catch (err) {
        // Without extra queries the question itself is still searched.
        failed('query extension', err);
        records.push({
          moduleName: 'Question completion',
          moduleType: 'queryExtension',
          runningTime: secondsSince(started),
          model: model.model,
          query: input.question,
          error: (err as Error).message,
          modelCalls,
        });
      }
    }
    sink.status('Dataset search');
    const started = performance.now();
    try {
      // A dataset deleted after the app was made is skipped and named, not fatal (the MCP server's search asks the same).
      const r = await this.search.search(caller, appSearchRequest(s, datasetIds, input.question, extensionQueries));
      const gone = r.missingDatasets;
      records.push({
        moduleName: 'Dataset search',
        moduleType: 'datasetSearchNode',
        runningTime: secondsSince(started),
        query: input.question,
        searchMode: r.searchMode,
        similarity: r.similarity,
        limit: r.limit,
        searchUsingReRank: r.usingReRank,
        datasets: datasetIds.filter((id) => !gone.includes(id)),
        quoteList: r.list,
        queries: r.queries,
        found: r.found,
        dropped: r.dropped,
        modelCalls: r.modelCalls,
        ...(gone.length ? { error: `datasets no longer exist: ${gone.join(', ')}` } : {}),
        ...(r.questionCut ? { questionCut: r.questionCut } : {}),
        ...(r.note ? { note: r.note } : {}),
      });
      return r.list.map((q) => ({ q: q.q, a: q.a, sourceName: q.sourceName, sourceId: q.sourceId }));
    } catch (err) {
      failed('search', err);
      throw err;
    }
  }

  private async extract(
    app: App,
    input: ChatTurnInput,
    usage: UsageTotal,
    failed: (step: string, err: unknown) => void,
  ): Promise<{ variables: Record<string, unknown>; record: StepRecord }> {
    const x = app.settings.extract!;
    const model = this.stepModel(x.model, 'usedInExtractFields', app.settings.model);
    const fitted = fitStepInput(input.question, input.history, model.maxContext);
    const r = await extractFields(this.gateway, model, { question: fitted.question, history: fitted.history, fields: x.fields, description: x.description });
    if (r.failure) failed('extraction', r.failure);
    usage.add(r.inputTokens, r.outputTokens);
    const record: StepRecord = {
      moduleName: 'Content extraction',
      moduleType: 'contentExtract',
      runningTime: seconds(r.runningTime),
      model: r.model,
      mode: r.mode,
      inputTokens: r.inputTokens,
      outputTokens: r.outputTokens,
      query: input.question,
      extractDescription: x.description,
      extractResult: r.fields,
      success: r.success,
      error: r.error,
      ...cutRecord(fitted.inputCut),
      ...(r.requestId ? { requestId: r.requestId } : {}),
      ...stepCalls('contentExtract', r),
    };
    return { variables: { ...input.variables, ...r.fields }, record };
  }

  /** Refuses (400) a question the application's model cannot read, before anything of the turn is stored. */
  checkQuestion(app: App, question: string): void {
    const model = this.llm(app.settings.model);
    this.checkQuestionFits(question, model, this.answerTokens(app, model));
  }

  private answerTokens(app: App, model: LlmModel): number {
    return app.settings.maxToken ?? model.maxResponse ?? 2000;
  }

  /**
   * The answer must read the whole question: one longer than the answering
   * model's context (less the answer's room) is refused before any model
   * call, with the numbers, rather than sent and refused upstream.
   */
  private checkQuestionFits(question: string, model: LlmModel, answerTokens: number): void {
    const maxContext = model.maxContext ?? DEFAULT_MAX_CONTEXT;
    const room = maxContext - Math.min(answerTokens, Math.floor(maxContext / 2));
    if (tokensWithin(question, room) !== undefined) return;
    const source = model.maxContext ? 'its maxContext in config.json' : `config.json gives no maxContext for it: ${DEFAULT_MAX_CONTEXT} assumed`;
    throw new PlatformError(
      400,
      'context_length_exceeded',
      `The question is longer than the application's model ${model.model} can read: at most ${room} tokens (${maxContext} in all, ${source}; ${maxContext - room} kept for the answer). Shorten the question (it has ${question.length} characters).`,
    );
  }

  private llm(name: string): LlmModel {
    // Checked at app creation; config.json may have changed since.
    return this.models.llmModels.find((m) => m.model === name) ?? { model: name };
  }

  /** The step's own model, else the first config.json model marked for that use, else the app's. */
  private stepModel(explicit: string | undefined, use: 'usedInClassify' | 'usedInExtractFields' | 'usedInQueryExtension', fallback: string): LlmModel {
    if (explicit) return this.llm(explicit);
    return this.models.llmModels.find((m) => m[use] && m.isActive !== false) ?? this.llm(fallback);
  }
}
