// Strings of the settings page's Tools section, spread into the apps area's
// tables (messages.ts). English first; the Chinese table must have every key.
export const en = {
  'apps.section.tools': 'Tools',
  'apps.tools.lead':
    'Tools of the team’s sources the model may call while it answers, up to {max}. How they are offered follows the model’s config.json entry (toolChoice, functionCall, else through the prompt).',
  'apps.tools.picked': '{n} of {max} picked',
  'apps.tools.full': 'The most an application can offer is {max}: take one out to pick another.',
  'apps.tools.none': 'The team has no tool sources yet.',
  'apps.tools.add': 'Add one',
  'apps.tools.manage': 'Manage the tool sources',
  'apps.tools.sourceEmpty': 'This source lists no tools.',
  'apps.tools.missingTitle': 'Missing tools',
  'apps.tools.sourceGone': '{name} — its source was deleted',
  'apps.tools.notListed': '{name} — no longer listed by {source}',
  'apps.tools.missingHint': 'The model is not offered these: uncheck them and save to take them out.',
  'apps.toolRounds': 'Rounds of tool calls',
  'apps.toolRounds.hint': 'From 1 to 10: the most rounds of calls in one answer, then the model answers with what it has.',
} as const;

export const zh: Record<keyof typeof en, string> = {
  'apps.section.tools': '工具',
  'apps.tools.lead':
    '模型回答时可以调用的团队工具源中的工具，最多 {max} 个。提供方式取决于模型在 config.json 中的配置（toolChoice、functionCall，否则通过提示词）。',
  'apps.tools.picked': '已选 {n} / {max}',
  'apps.tools.full': '一个应用最多提供 {max} 个工具：取消一个才能再选。',
  'apps.tools.none': '团队还没有工具源。',
  'apps.tools.add': '去添加',
  'apps.tools.manage': '管理工具源',
  'apps.tools.sourceEmpty': '该工具源没有列出任何工具。',
  'apps.tools.missingTitle': '缺失的工具',
  'apps.tools.sourceGone': '{name} — 其工具源已被删除',
  'apps.tools.notListed': '{name} — {source} 已不再列出',
  'apps.tools.missingHint': '模型不会获得这些工具：取消勾选并保存即可移除。',
  'apps.toolRounds': '工具调用轮数',
  'apps.toolRounds.hint': '1 到 10：一次回答中最多调用几轮工具，之后模型用已有的结果回答。',
};
