// Strings of the datasets pages. English first; the Chinese table must have every key.
export const en = {
  'datasets.empty': 'No knowledge bases yet.',
  'datasets.model': 'Vector model',
} as const;

export const zh: Record<keyof typeof en, string> = {
  'datasets.empty': '还没有知识库。',
  'datasets.model': '向量模型',
};
