// Question classification and content extraction against a real gateway in
// front of the upstream simulator, over HTTP, in all three call modes:
// tools (sim-tools, toolChoice), legacy functions (sim-tools, functionCall) and
// prompt mode (sim-echo-prompt, which echoes the prompt, so the JSON the
// prompt or question holds is what gets parsed). What reached the simulator is
// checked too, which shows the gateway passes tools and functions through.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { classifyQuestion, extractFields, matchCategory, type ExtractField } from '../src/chat/steps/index.js';
import { GatewayClient, GatewayError } from '../src/gateway-client/index.js';
import type { LlmModel } from '../src/models/config-file.js';

const TOOLS: LlmModel = { model: 'sim-tools', toolChoice: true, functionCall: true };
const FUNCTIONS: LlmModel = { model: 'sim-tools', toolChoice: false, functionCall: true };
const PROMPT: LlmModel = { model: 'sim-echo-prompt', toolChoice: false, functionCall: false };

const categories = [
  { id: 'Billing', description: 'Invoices, payments and refunds' },
  { id: 'tech', description: 'Technical problems with the product' },
];
const history = [
  { role: 'user', content: 'Hi, I have a question about my account.' },
  { role: 'assistant', content: 'Sure, what is it?' },
];
const BUILT_IN_CLASSIFY_INTRO = "Classify the user's question into exactly one of the categories below.";
const BUILT_IN_EXTRACT_INTRO = 'Extract information from the conversation below into a JSON object.';

describe('chat steps against the gateway and simulator', () => {
  let gw: TestGateway;
  let gateway: GatewayClient;
  /** The body the simulator last received for a model (after the gateway relayed it). */
  const sentTo = (model: string) => gw.sim.stats().lastBody[model] as any;

  beforeAll(async () => {
    gw = await startTestGateway();
    gateway = new GatewayClient({ url: gw.url, token: ROOT_TOKEN });
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await gw?.close();
  });
  beforeEach(() => gw.sim.reset());

  describe('classifyQuestion', () => {
    it('tools mode: a forced tool call; the answer matches an id case-insensitively', async () => {
      // sim-tools fills the required "type" with the question's last word, lower-cased.
      const r = await classifyQuestion(gateway, TOOLS, { question: 'Where is my invoice? Billing', history, categories, background: 'A shop.' });
      expect(r).toMatchObject({ categoryId: 'Billing', mode: 'toolChoice', model: 'sim-tools', answer: '{"type":"billing"}' });
      expect(r.error).toBeUndefined();
      expect(r.inputTokens).toBeGreaterThan(0);
      expect(r.outputTokens).toBeGreaterThan(0);
      expect(r.runningTime).toBeGreaterThanOrEqual(0);
      const body = sentTo('sim-tools');
      expect(body.tools).toEqual([
        {
          type: 'function',
          function: {
            name: 'classify_question',
            description: "Records the category of the user's question.",
            parameters: {
              type: 'object',
              properties: { type: { type: 'string', enum: ['Billing', 'tech'], description: expect.any(String) } },
              required: ['type'],
            },
          },
        },
      ]);
      expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'classify_question' } });
      expect(body.functions).toBeUndefined();
      expect(body.messages.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
      expect(body.messages[0].content).toContain('- Billing: Invoices, payments and refunds');
      expect(body.messages[0].content).toContain('Background:\nA shop.');
      expect(body.messages.at(-1).content).toBe('Where is my invoice? Billing');
    });

    it('functions mode: functions + function_call reach the simulator untouched', async () => {
      const r = await classifyQuestion(gateway, FUNCTIONS, { question: 'The app crashes on start: tech', history: [], categories });
      expect(r).toMatchObject({ categoryId: 'tech', mode: 'functionCall', answer: '{"type":"tech"}' });
      expect(r.error).toBeUndefined();
      const body = sentTo('sim-tools');
      expect(body.functions).toEqual([
        {
          name: 'classify_question',
          description: "Records the category of the user's question.",
          parameters: {
            type: 'object',
            properties: { type: { type: 'string', enum: ['Billing', 'tech'], description: expect.any(String) } },
            required: ['type'],
          },
        },
      ]);
      expect(body.function_call).toEqual({ name: 'classify_question' });
      expect(body.tools).toBeUndefined();
      expect(body.tool_choice).toBeUndefined();
    });

    it("merges the model's defaultConfig into the body, never over the mode's fields", async () => {
      const model: LlmModel = { ...TOOLS, defaultConfig: { temperature: 1, top_p: 0.5, model: 'not-this', tools: [] } };
      const r = await classifyQuestion(gateway, model, { question: 'refund please tech', history: [], categories });
      expect(r.categoryId).toBe('tech');
      const body = sentTo('sim-tools');
      expect(body).toMatchObject({ model: 'sim-tools', temperature: 1, top_p: 0.5 });
      expect(body.tools).toHaveLength(1);
    });

    it('prompt mode, built-in prompt: categories, conversation and question in one message, the answer read leniently', async () => {
      const question = "I was charged twice. {'type': 'billing',}";
      const r = await classifyQuestion(gateway, PROMPT, { question, history, categories });
      expect(r).toMatchObject({ categoryId: 'Billing', mode: 'prompt', model: 'sim-echo-prompt' });
      expect(r.error).toBeUndefined();
      const body = sentTo('sim-echo-prompt');
      expect(body.tools).toBeUndefined();
      expect(body.functions).toBeUndefined();
      expect(body.messages).toHaveLength(1);
      const prompt: string = body.messages[0].content;
      expect(prompt.startsWith(BUILT_IN_CLASSIFY_INTRO)).toBe(true);
      expect(prompt).toContain('Categories (id: description):\n- Billing: Invoices, payments and refunds\n- tech: Technical problems with the product');
      expect(prompt).toContain('Conversation so far:\nuser: Hi, I have a question about my account.\nassistant: Sure, what is it?');
      expect(prompt).toContain(`Question:\n${question}`);
      expect(prompt).toMatch(/Answer with only a JSON object of the form \{"type": "<category id>"\}/);
      expect(r.answer).toBe(prompt); // sim-echo-prompt
    });

    it('prompt mode, customCQPrompt: replaces the built-in prompt; placeholders filled, unplaced sections appended', async () => {
      const model: LlmModel = { ...PROMPT, customCQPrompt: 'You sort support mail into:\n{{typeList}}\nAlways answer {"type": "tech"}.' };
      const question = 'My invoice is wrong';
      const r = await classifyQuestion(gateway, model, { question, history, categories });
      expect(r.categoryId).toBe('tech');
      expect(r.error).toBeUndefined();
      const prompt: string = sentTo('sim-echo-prompt').messages[0].content;
      expect(prompt).not.toContain(BUILT_IN_CLASSIFY_INTRO);
      expect(prompt).not.toContain('{{typeList}}');
      expect(prompt.startsWith('You sort support mail into:\n- Billing: Invoices, payments and refunds\n- tech: Technical problems')).toBe(true);
      expect(prompt.match(/- Billing:/g)).toHaveLength(1); // placed, so not appended again
      expect(
        prompt.endsWith(`Conversation so far:\nuser: Hi, I have a question about my account.\nassistant: Sure, what is it?\n\nQuestion:\n${question}`),
      ).toBe(true);
    });

    it('an answer that matches no category: null, with the answer and request id in the error', async () => {
      const r = await classifyQuestion(gateway, TOOLS, { question: 'What is the weather', history: [], categories });
      expect(r.categoryId).toBeNull();
      expect(r.error).toMatch(/the model answered "weather", which matches no category \(Billing, tech\) \(request id: [^)]+\)$/);
      expect(r.requestId).toBeTruthy();
      expect(r.error).toContain(r.requestId);
      expect(r.failure).toBeUndefined();
      // The built-in prompt's own example is no category either (sim-echo-prompt, no JSON in the question).
      const echoed = await classifyQuestion(gateway, PROMPT, { question: 'hello', history: [], categories });
      expect(echoed.categoryId).toBeNull();
      expect(echoed.error).toMatch(/the model answered "<category id>", which matches no category/);
    });

    it('an unparseable answer: null, with the answer in the error', async () => {
      const model: LlmModel = { ...PROMPT, customCQPrompt: 'Which category fits?' };
      const r = await classifyQuestion(gateway, model, { question: 'hello there', history: [], categories });
      expect(r.categoryId).toBeNull();
      expect(r.error).toMatch(/^the model's answer has no readable JSON object: Which category fits\?/);
      expect(r.error).toMatch(/\(request id: [^)]+\)$/);
    });

    it('a gateway error: null, the message with its request id in error, the GatewayError with the body sent in failure', async () => {
      for (const model of ['sim-500', 'sim-400']) {
        const r = await classifyQuestion(gateway, { model, toolChoice: true }, { question: 'x tech', history: [], categories });
        expect(r.categoryId).toBeNull();
        expect(r.failure).toBeInstanceOf(GatewayError);
        expect(r.failure!.status).toBe(model === 'sim-500' ? 500 : 400);
        expect(r.error).toBe(r.failure!.message);
        expect(r.error).toMatch(/\(request id: [^)]+\)$/);
        expect(r.requestId).toBe(r.failure!.requestId);
        const sent = JSON.parse(r.failure!.requestBody!);
        expect(sent).toMatchObject({ model, stream: false, tool_choice: { type: 'function', function: { name: 'classify_question' } } });
      }
    });

    it('no categories: no call, an error', async () => {
      const r = await classifyQuestion(gateway, TOOLS, { question: 'x', history: [], categories: [] });
      expect(r).toMatchObject({ categoryId: null, error: 'the classification has no categories' });
      expect(gw.sim.stats().total).toBe(0);
    });
  });

  describe('extractFields', () => {
    const fields: ExtractField[] = [
      { key: 'amount', description: 'How many items', type: 'number', required: true },
      { key: 'city', description: 'Delivery city', type: 'string', required: true },
      { key: 'urgent', description: 'Whether it is urgent', type: 'boolean', required: false },
    ];

    it('tools mode: the fields as a schema, values coerced to their types', async () => {
      // sim-tools fills every required field with the last word: "42".
      const r = await extractFields(gateway, TOOLS, { question: 'Please send me 42', history, fields, description: 'An order form.' });
      expect(r).toMatchObject({ fields: { amount: 42, city: '42' }, success: true, missing: [], mode: 'toolChoice', model: 'sim-tools' });
      expect(r.fields).not.toHaveProperty('urgent');
      expect(r.error).toBeUndefined();
      expect(r.inputTokens).toBeGreaterThan(0);
      const body = sentTo('sim-tools');
      expect(body.tools[0].function).toEqual({
        name: 'extract_fields',
        description: 'Records the values found in the conversation.',
        parameters: {
          type: 'object',
          properties: {
            amount: { type: 'number', description: 'How many items' },
            city: { type: 'string', description: 'Delivery city' },
            urgent: { type: 'boolean', description: 'Whether it is urgent' },
          },
          required: ['amount', 'city'],
        },
      });
      expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'extract_fields' } });
      expect(body.messages[0].content).toContain('Task:\nAn order form.');
      expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'Please send me 42' });
    });

    it('functions mode; a value that does not convert is dropped with a note, and success is false', async () => {
      const withFlag: ExtractField[] = [...fields, { key: 'gift', description: 'Gift wrapped', type: 'boolean', required: true }];
      const r = await extractFields(gateway, FUNCTIONS, { question: 'Please send me 42', history: [], fields: withFlag });
      expect(r).toMatchObject({ fields: { amount: 42, city: '42' }, success: false, missing: ['gift'], mode: 'functionCall' });
      expect(r.error).toMatch(/^gift: "42" is not a boolean \(dropped\) \(request id: [^)]+\)$/);
      const body = sentTo('sim-tools');
      expect(body.functions[0].name).toBe('extract_fields');
      expect(body.functions[0].parameters.required).toEqual(['amount', 'city', 'gift']);
      expect(body.function_call).toEqual({ name: 'extract_fields' });
      expect(body.tools).toBeUndefined();
    });

    it('prompt mode, built-in prompt: the field list in the prompt, a JavaScript-ish answer coerced', async () => {
      const question = `Order: {amount: '1,250', city: "Paris", urgent: 'yes', extra: 1,}`;
      const r = await extractFields(gateway, PROMPT, { question, history, fields });
      expect(r.fields).toEqual({ amount: 1250, city: 'Paris', urgent: true });
      expect(r).toMatchObject({ success: true, mode: 'prompt' });
      expect(r.error).toBeUndefined();
      const prompt: string = sentTo('sim-echo-prompt').messages[0].content;
      expect(prompt.startsWith(BUILT_IN_EXTRACT_INTRO)).toBe(true);
      expect(prompt).toContain(
        '- amount (number, required): How many items\n- city (string, required): Delivery city\n- urgent (boolean, optional): Whether it is urgent',
      );
      expect(prompt).toContain('Conversation so far:\nuser: Hi, I have a question about my account.');
      expect(prompt).toContain(`Latest message:\n${question}`);
    });

    it('prompt mode, customExtractPrompt: replaces the built-in prompt; enum values matched case-insensitively', async () => {
      const model: LlmModel = { ...PROMPT, customExtractPrompt: 'Fill in {{fields}}\nfrom: {{text}}\nReply like {amount: 7, city: "Oslo", plan: "pro"}' };
      const withPlan: ExtractField[] = [...fields, { key: 'plan', description: 'The plan', type: 'string', required: false, enum: ['Basic', 'Pro'] }];
      const r = await extractFields(gateway, model, { question: 'I want the pro plan', history: [], fields: withPlan });
      expect(r.fields).toEqual({ amount: 7, city: 'Oslo', plan: 'Pro' });
      expect(r.success).toBe(true);
      const prompt: string = sentTo('sim-echo-prompt').messages[0].content;
      expect(prompt).not.toContain(BUILT_IN_EXTRACT_INTRO);
      expect(prompt).toContain('- plan (string, optional): The plan; one of: Basic, Pro');
      expect(prompt).toContain('from: I want the pro plan\nReply like');
      expect(prompt).not.toContain('Latest message:'); // {{text}} placed the question
    });

    it('an unparseable answer: no fields, success false, the answer in the error', async () => {
      const model: LlmModel = { ...PROMPT, customExtractPrompt: 'List the values.' };
      const r = await extractFields(gateway, model, { question: 'nothing here', history: [], fields });
      expect(r).toMatchObject({ fields: {}, success: false, missing: ['amount', 'city'] });
      expect(r.error).toMatch(/^the model's answer has no readable JSON object: List the values\./);
    });

    it('a gateway error: reported with its request id, never thrown', async () => {
      const r = await extractFields(gateway, { model: 'sim-400' }, { question: 'x', history: [], fields });
      expect(r).toMatchObject({ fields: {}, success: false, mode: 'prompt' });
      expect(r.failure).toBeInstanceOf(GatewayError);
      expect(r.error).toMatch(/\(request id: [^)]+\)$/);
      expect(JSON.parse(r.failure!.requestBody!).messages[0].content.startsWith(BUILT_IN_EXTRACT_INTRO)).toBe(true);
    });
  });
});

describe('matchCategory', () => {
  const categories = [
    { id: 'billing', description: 'Invoices and payments' },
    { id: 'Tech-2', description: 'Technical problems' },
  ];
  it('matches the id exactly, case-insensitively, with quotes or a copied description, or by description', () => {
    expect(matchCategory('billing', categories)?.id).toBe('billing');
    expect(matchCategory(' TECH-2 ', categories)?.id).toBe('Tech-2');
    expect(matchCategory('"billing".', categories)?.id).toBe('billing');
    expect(matchCategory('billing: Invoices and payments', categories)?.id).toBe('billing');
    expect(matchCategory('technical problems', categories)?.id).toBe('Tech-2');
  });
  it('matches nothing else', () => {
    expect(matchCategory('weather', categories)).toBeUndefined();
    expect(matchCategory('bill', categories)).toBeUndefined();
    expect(matchCategory('', categories)).toBeUndefined();
    expect(matchCategory({ id: 'billing' }, categories)).toBeUndefined();
  });
});
