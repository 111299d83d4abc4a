// The app's strings: every area's keys are its own. A key in two areas'
// messages.ts would merge silently, the later text shown in the earlier
// area's page (the console's logs page once renamed the platform's "Chat log").
import { describe, expect, it } from 'vitest';
import { areas } from '../src/message-areas';

describe('the messages of the web app', () => {
  it('has no key in two areas, and every English key translated', () => {
    const seen = new Map<string, number>();
    const twice: string[] = [];
    areas.forEach((area, i) => {
      for (const key of Object.keys(area.en)) {
        if (seen.has(key)) twice.push(`${key} (areas ${seen.get(key)} and ${i})`);
        seen.set(key, i);
      }
      expect(Object.keys(area.zh).sort()).toEqual(Object.keys(area.en).sort());
    });
    expect(twice).toEqual([]);
    expect(seen.size).toBeGreaterThan(500);
  });
});
