// A message as the chat shows it, and what it quotes.
import type { PublicApp, StepRecord } from '../api';

export interface Quote {
  id: string;
  q: string;
  a: string;
  sourceName: string;
  collectionId?: string;
  /** The pages of its document (a PDF's chunks), first and last. */
  pages?: [number, number];
  /** The rows of its sheet or CSV file (a spreadsheet's chunks), first and last. */
  rows?: [number, number];
  score: { type: string; value: number; index: number }[];
}

export interface ChatMessage {
  /** The item's dataId (the answer's responseChatItemId). */
  id: string;
  role: 'user' | 'assistant';
  text: string;
  /** responseData: one record per step (detail=true). */
  records?: StepRecord[];
  error?: { message: string; requestId: string | null };
  /** Stopped by the user before its end. */
  stopped?: boolean;
  /** Still being made on the platform (a reopened chat whose answer has not ended yet). */
  running?: boolean;
  /** Cut off: the platform stopped while making it. */
  interrupted?: boolean;
  feedback?: { good?: string; bad?: string };
  /** The team's annotation that corrects this answer (the chat log's records; never a visitor's). */
  annotation?: { id: string; question: string; answer: string };
}

/** The quotes an answer's markers [1], [2]… point at: the dataset search's quoteList, in order. */
export function quotesOf(records: StepRecord[] | undefined): Quote[] {
  const search = records?.find((r) => r.moduleType === 'datasetSearchNode');
  return Array.isArray(search?.quoteList) ? (search.quoteList as Quote[]) : [];
}

/** The {{name}} placeholders of a prompt: the variables a chat asks for. */
export function variablesOf(prompt: string): string[] {
  const names = new Set<string>();
  for (const m of prompt.matchAll(/\{\{\s*([A-Za-z_][\w-]*)\s*\}\}/g)) names.add(m[1]!);
  return [...names];
}

/** What a chat with the app asks for: its prompt's variables, less those its extraction step fills. */
export function appVariables(app: Pick<PublicApp, 'systemPrompt' | 'extract'>): string[] {
  const fromExtraction = new Set(app.extract?.fields.map((f) => f.key) ?? []);
  return variablesOf(app.systemPrompt).filter((v) => !fromExtraction.has(v));
}

export function newId(): string {
  return crypto.randomUUID().replace(/-/g, '').slice(0, 24);
}
