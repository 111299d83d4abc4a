// Prompt-mode text for the steps. A step's data (categories, fields, the
// conversation, the question) comes in named sections. The built-in prompt is
// an intro, the sections under their headings, then the answer format. A
// custom prompt from config.json (customCQPrompt / customExtractPrompt)
// replaces the intro and the format; its {{placeholders}} are filled with the
// bare section text, and any section it does not place is appended under its
// heading, so the model always sees the data it needs.
import type { ChatTurn } from './call-mode.js';

export interface PromptSection {
  /** The placeholder name, `{{name}}` in a custom prompt. */
  name: string;
  /** Other names accepted for it (FastGPT's spellings). */
  aliases?: string[];
  heading: string;
  /** Empty: the section is left out (its placeholder becomes ""). */
  text: string;
}

const renderSection = (s: PromptSection) => `${s.heading}:\n${s.text}`;

/** The built-in prompt: intro, the non-empty sections, the answer format. */
export function builtInPrompt(intro: string, sections: PromptSection[], answerFormat: string): string {
  return [intro, ...sections.filter((s) => s.text.trim()).map(renderSection), answerFormat].join('\n\n');
}

/** A custom prompt with its placeholders filled and the sections it did not place appended. */
export function customPrompt(template: string, sections: PromptSection[]): string {
  let text = template;
  const unplaced: PromptSection[] = [];
  for (const section of sections) {
    const names = [section.name, ...(section.aliases ?? [])];
    let placed = false;
    for (const name of names) {
      const source = `\\{\\{\\s*${name}\\s*\\}\\}`;
      if (!new RegExp(source).test(text)) continue;
      placed = true;
      // A function replacement: the section text may contain "$&"-like sequences.
      text = text.replace(new RegExp(source, 'g'), () => section.text);
    }
    if (!placed && section.text.trim()) unplaced.push(section);
  }
  return [text.trim(), ...unplaced.map(renderSection)].join('\n\n');
}

/** The conversation as text, one "role: content" line per turn (prompt mode has no message roles to use). */
export function historyText(history: ChatTurn[]): string {
  return history
    .filter((t) => t.content.trim())
    .map((t) => `${t.role}: ${t.content.trim()}`)
    .join('\n');
}

/** The turns worth sending as messages in tools/functions mode: user and assistant turns with content. */
export function historyMessages(history: ChatTurn[]): { role: string; content: string }[] {
  return history.filter((t) => (t.role === 'user' || t.role === 'assistant') && t.content.trim()).map((t) => ({ role: t.role, content: t.content }));
}
